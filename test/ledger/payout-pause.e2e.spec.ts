import { ConsoleClient } from '../console/console-client';
import { startTestApp, TestApp } from '../support/app';
import { serveForCli, svc } from '../support/cli';
import { recordedOfType } from '../support/events';
import { ledgerDriver } from './support';

/**
 * Issue 38, defect 1, the rest: a destination the processor refused pauses that creator's
 * payouts (an event, with the reason), the creator sees why on GET /v1/payouts and
 * GET /v1/balance, the operator on the console's account page; later runs skip the creator
 * (no new failed payout), and setting a destination lifts the pause. In the sandbox, whose
 * test destination acct_sandboxRefuses refuses every transfer (resource_missing).
 */
describe('a refused payout destination pauses its creator until the destination changes', () => {
  let t: TestApp;
  let ledger: ReturnType<typeof ledgerDriver>;
  let restoreEnv: () => void;
  beforeAll(async () => {
    t = await startTestApp();
    ledger = ledgerDriver(t);
    restoreEnv = await serveForCli(t);
  });
  afterAll(async () => {
    restoreEnv();
    await t.close();
  });

  const runJson = async () => {
    const run = await svc('payouts', 'run', '--mode', 'test', '--json');
    return { code: run.code, results: JSON.parse(run.stdout).results as any[], stderr: run.stderr };
  };
  const resultOf = (results: any[], accountId: string) => results.find((r) => r.account_id === accountId);
  const failedPayouts = async (accountId: string) => (await recordedOfType(t, 'PayoutFailed')).filter((e) => e.data.account_id === accountId);
  const payoutsOf = async (key: string) => (await t.request('GET', '/v1/payouts', { key })).body;

  it('pauses the refused creator, pays the others, skips it on later runs, and pays it once a new destination is set', async () => {
    const refused = await t.accountWithKey();
    const paid = await t.accountWithKey();
    await ledger.sale(refused.accountId, 'test', { amount_cents: 1000 });
    await ledger.sale(paid.accountId, 'test', { amount_cents: 2000 });
    expect((await svc('payouts', 'destination', '--account', refused.accountId, '--mode', 'test', '--stripe-account', 'acct_sandboxRefuses')).code).toBe(0);

    const first = await runJson();
    expect(first.code).toBe(1);
    expect(resultOf(first.results, paid.accountId)).toMatchObject({ status: 'paid', amount_cents: 1700 });
    expect(resultOf(first.results, refused.accountId)).toMatchObject({ status: 'failed', failure_code: 'resource_missing' });

    // The pause is an event of its own, recorded with the refused payout, with its reason.
    const pauses = (await recordedOfType(t, 'PayoutsPaused')).filter((e) => e.data.account_id === refused.accountId);
    expect(pauses.map((e) => e.data)).toEqual([
      expect.objectContaining({ mode: 'test', reason: 'destination_refused: resource_missing', failure_code: 'resource_missing', destination: 'acct_sandboxRefuses', payout_id: (await failedPayouts(refused.accountId))[0].data.payout_id }),
    ]);
    const pause = { reason: 'destination_refused: resource_missing', since: pauses[0].data.paused_at, failure_code: 'resource_missing' };

    // The creator sees why, on the payouts list, the balance and the ledger; the paid creator sees payouts running.
    const listed = await payoutsOf(refused.key);
    expect(listed).toMatchObject({ payouts_paused: true, payouts_pause: pause, amount_owed_cents: 850 });
    expect(listed.items.map((p: any) => [p.status, p.failure_code])).toEqual([['failed', 'resource_missing']]);
    expect((await t.request('GET', '/v1/balance', { key: refused.key })).body).toMatchObject({ available_cents: 850, payouts_paused: true, payouts_pause: pause });
    expect((await ledger.balance(refused.key)).payouts_paused).toBe(true);
    expect(await payoutsOf(paid.key)).toMatchObject({ payouts_paused: false, payouts_pause: null });
    // An answer as of an earlier instant never changes: it carries no pause.
    const asOf = (await t.request('GET', `/v1/balance?as_of=${encodeURIComponent(new Date().toISOString())}`, { key: refused.key })).body;
    expect(asOf).not.toHaveProperty('payouts_pause');

    // The operator sees it on the account's console page.
    const browser = new ConsoleClient(t, '10.38.1.1');
    await browser.signInAsOperator('test');
    const page = await browser.get(`/console/accounts?q=${refused.accountId}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('data-payouts="paused"');
    expect(page.text).toContain('destination_refused: resource_missing');
    expect((await browser.get(`/console/accounts?q=${paid.accountId}`)).text).toContain('data-payouts="running"');

    // Later runs skip it, saying why, and record no other failed payout; nothing failed, so they exit 0.
    await ledger.sale(paid.accountId, 'test', { amount_cents: 1000 });
    for (let run = 0; run < 2; run++) {
      const later = await runJson();
      expect(later.code).toBe(0);
      expect(resultOf(later.results, refused.accountId)).toEqual({
        account_id: refused.accountId,
        status: 'skipped',
        payout_id: null,
        amount_cents: null,
        failure_code: 'payouts_paused',
        reason: expect.stringContaining('destination_refused: resource_missing'),
      });
    }
    expect(await failedPayouts(refused.accountId)).toHaveLength(1);
    expect((await payoutsOf(refused.key)).items).toHaveLength(1);
    // Named, the run answers why too.
    const named = await svc('payouts', 'run', '--mode', 'test', '--account', refused.accountId);
    expect(named.code).toBe(1);
    expect(named.stderr).toMatch(/payouts_paused: .*destination_refused: resource_missing.*svc payouts destination/);
    expect(await failedPayouts(refused.accountId)).toHaveLength(1);

    // A malformed destination is refused and lifts nothing.
    const bad = await svc('payouts', 'destination', '--account', refused.accountId, '--mode', 'test', '--stripe-account', 'not-an-account');
    expect(bad.code).not.toBe(0);
    expect((await payoutsOf(refused.key)).payouts_pause).toEqual(pause);

    // A new destination lifts the pause (an event), and the next run pays.
    expect((await svc('payouts', 'destination', '--account', refused.accountId, '--mode', 'test', '--stripe-account', 'acct_sandboxPays')).code).toBe(0);
    const resumed = (await recordedOfType(t, 'PayoutsResumed')).filter((e) => e.data.account_id === refused.accountId);
    expect(resumed.map((e) => e.data.reason)).toEqual(['destination_changed']);
    expect(await payoutsOf(refused.key)).toMatchObject({ payouts_paused: false, payouts_pause: null });
    expect((await browser.get(`/console/accounts?q=${refused.accountId}`)).text).toContain('data-payouts="running"');
    const last = await runJson();
    expect(last.code).toBe(0);
    expect(resultOf(last.results, refused.accountId)).toMatchObject({ status: 'paid', amount_cents: 850 });
    expect((await payoutsOf(refused.key)).items.map((p: any) => p.status)).toEqual(['paid', 'failed']);
    expect((await ledger.balance(refused.key)).summary).toMatchObject({ paid_out_cents: 850, balance_cents: 0 });
    expect(await failedPayouts(refused.accountId)).toHaveLength(1);
    expect((await svc('ledger', 'verify')).code).toBe(0);
  });

  it('keeps an operator\'s pause when the destination changes: only svc payouts resume lifts it', async () => {
    const creator = await t.accountWithKey();
    await ledger.sale(creator.accountId, 'test', { amount_cents: 1000 });
    expect((await svc('payouts', 'pause', '--account', creator.accountId, '--mode', 'test')).code).toBe(0);
    expect((await payoutsOf(creator.key)).payouts_pause).toMatchObject({ reason: 'paused_by_operator', failure_code: null });
    expect((await svc('payouts', 'destination', '--account', creator.accountId, '--mode', 'test', '--stripe-account', 'acct_sandboxOther')).code).toBe(0);
    expect(await payoutsOf(creator.key)).toMatchObject({ payouts_paused: true, payouts_pause: { reason: 'paused_by_operator' } });
    const skipped = await runJson();
    expect(resultOf(skipped.results, creator.accountId)).toMatchObject({ status: 'skipped', failure_code: 'payouts_paused', reason: expect.stringContaining('svc payouts resume') });
    expect((await svc('payouts', 'resume', '--account', creator.accountId, '--mode', 'test')).code).toBe(0);
    expect(await payoutsOf(creator.key)).toMatchObject({ payouts_paused: false, payouts_pause: null });
    expect(resultOf((await runJson()).results, creator.accountId)).toMatchObject({ status: 'paid', amount_cents: 850 });
  });
});
