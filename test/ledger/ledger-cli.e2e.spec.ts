import { ProjectionRunner } from '../../src/projection-runner/projection-runner';
import { startTestApp, TestApp } from '../support/app';
import { serveForCli, svc } from '../support/cli';
import { ledgerDriver } from './support';

describe('svc payouts and svc ledger against a running service', () => {
  let t: TestApp;
  let ledger: ReturnType<typeof ledgerDriver>;
  let restoreEnv: () => void;
  beforeAll(async () => {
    t = await startTestApp();
    ledger = ledgerDriver(t);
    // The CLI reads its target from the environment, as it does for an operator.
    restoreEnv = await serveForCli(t);
  });
  afterAll(async () => {
    restoreEnv();
    await t.close();
  });

  it('pauses, resumes and runs payouts with the JSON results of decisions section 2', async () => {
    const { accountId } = await t.accountWithKey();
    await ledger.sale(accountId, 'live', { amount_cents: 1000 });
    const paused = await svc('payouts', 'pause', '--account', accountId, '--mode', 'live', '--json');
    expect(paused.code).toBe(0);
    expect(JSON.parse(paused.stdout)).toEqual({ account: accountId, mode: 'live', payouts_paused: true });
    // A paused creator with a balance is reported skipped, with why (issue 38, defect 1).
    expect(JSON.parse((await svc('payouts', 'run', '--mode', 'live', '--json')).stdout)).toEqual({
      items: [],
      results: [{ account_id: accountId, status: 'skipped', payout_id: null, amount_cents: null, failure_code: 'payouts_paused', reason: expect.stringContaining('paused_by_operator') }],
    });
    await svc('payouts', 'resume', '--account', accountId, '--mode', 'live');
    const run = await svc('payouts', 'run', '--mode', 'live', '--account', accountId, '--json');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).items).toEqual([expect.objectContaining({ object: 'payout', amount_cents: 850, status: 'paid' })]);
    const again = await svc('payouts', 'run', '--mode', 'live', '--account', accountId);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^svc: nothing_to_pay: .*balance is 0 cents/);
    const missing = await svc('payouts', 'run', '--json');
    expect(missing.code).toBe(2);
  });

  // Issue 38, defect 1, in the sandbox: its test destination acct_sandboxRefuses refuses a
  // transfer as Stripe refuses an unknown destination; the run pays the others and exits 1.
  it('svc payouts run pays every creator it can, prints the refused one with its code and exits 1 (payouts_failed)', async () => {
    const refused = await t.accountWithKey();
    const paid = await t.accountWithKey();
    await ledger.sale(refused.accountId, 'test', { amount_cents: 1000 });
    await ledger.sale(paid.accountId, 'test', { amount_cents: 2000 });
    expect((await svc('payouts', 'destination', '--account', refused.accountId, '--mode', 'test', '--stripe-account', 'acct_sandboxRefuses')).code).toBe(0);
    const run = await svc('payouts', 'run', '--mode', 'test', '--json');
    expect(run.code).toBe(1);
    const { results } = JSON.parse(run.stdout);
    expect(results.find((r: any) => r.account_id === paid.accountId)).toMatchObject({ status: 'paid', amount_cents: 1700 });
    expect(results.find((r: any) => r.account_id === refused.accountId)).toMatchObject({ status: 'failed', failure_code: 'resource_missing' });
    expect(JSON.parse(run.stderr).error).toEqual({ code: 'payouts_failed', message: expect.stringContaining(`${refused.accountId} (resource_missing)`) });
    expect((await ledger.balance(paid.key)).summary).toMatchObject({ paid_out_cents: 1700, balance_cents: 0 });
    expect((await ledger.balance(refused.key)).summary).toMatchObject({ paid_out_cents: 0, balance_cents: 850 });
  });

  it('ledger verify exits 0 when the read model matches and 1 with the first difference when not', async () => {
    const { accountId, key } = await t.accountWithKey();
    await ledger.sale(accountId, 'test', { amount_cents: 1000 });
    const ok = await svc('ledger', 'verify', '--json');
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ ok: true, first_difference: null });

    const [item] = (await ledger.balance(key)).items;
    await t.db.query('UPDATE balance_transactions SET fee_cents = 0 WHERE id = $1', [item.id]);
    const bad = await svc('ledger', 'verify', '--account', accountId, '--mode', 'test', '--json');
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout).first_difference).toMatchObject({ transaction_id: item.id, field: 'fee_cents', expected: 150, actual: 0 });
    expect(JSON.parse(bad.stderr).error).toEqual({ code: 'ledger_mismatch', message: expect.stringContaining(`transaction ${item.id}: fee_cents is 0`) });
    const text = await svc('ledger', 'verify');
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/^ledger differs from the event log: /);

    await t.app.get(ProjectionRunner).rebuild(['balance_transactions']);
    expect((await svc('ledger', 'verify')).code).toBe(0);
  });

  it('ledger export writes CSV oldest first, safe to open in a spreadsheet, or JSON', async () => {
    const { accountId } = await t.accountWithKey();
    await ledger.sale(accountId, 'test', { purchase_id: 'pur_c1', asset: { id: 'a1', slug: 'gripper', title: 'Gripper, "v2"' } });
    await ledger.sale(accountId, 'test', { purchase_id: 'pur_c2', asset: { id: 'a2', slug: 'evil', title: '=HYPERLINK("http://x")' } });
    await ledger.payouts('test', accountId);
    const csv = await svc('ledger', 'export', '--account', accountId, '--mode', 'test');
    expect(csv.code).toBe(0);
    const lines = csv.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('id,type,amount_cents,fee_cents,net_cents,currency,status,created_at,purchase_id,asset_slug,asset_title,payout_id,description,reporting_category,balance_after_cents');
    expect(lines).toHaveLength(4);
    expect(lines[1]).toMatch(/^txn_\w+,sale,1000,150,850,usd,paid,[^,]+,pur_c1,gripper,"Gripper, ""v2""",,"Sale of ""Gripper, ""v2""""",charge,850$/);
    expect(lines[2]).toContain(`,evil,"'=HYPERLINK(""http://x"")",`);
    expect(lines[2]).toMatch(/,charge,1700$/);
    expect(lines[3]).toMatch(/^txn_\w+,payout,-1700,0,-1700,usd,paid,[^,]+,,,,po_\w+,Payout,payout,0$/);

    const json = await svc('ledger', 'export', '--account', accountId, '--mode', 'test', '--format', 'json');
    expect(JSON.parse(json.stdout).items.map((i: any) => i.type)).toEqual(['sale', 'sale', 'payout']);
    const bad = await svc('ledger', 'export', '--account', accountId, '--mode', 'test', '--format', 'xml');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--format must be csv or json');
  });
});
