import { ProjectionRunner } from '../../src/projection-runner/projection-runner';
import { startTestApp, TestApp } from '../support/app';
import { stallProjections } from '../support/stalled-projections';
import { ledgerDriver } from './support';

describe('ledger operator API: payouts run/pause/resume, ledger verify and export', () => {
  let t: TestApp;
  let ledger: ReturnType<typeof ledgerDriver>;
  beforeAll(async () => {
    t = await startTestApp();
    ledger = ledgerDriver(t);
  });
  afterAll(() => t.close());

  it('pauses and resumes payouts; a paused account is skipped', async () => {
    const { accountId, key } = await t.accountWithKey();
    await ledger.sale(accountId, 'test', { amount_cents: 2000 });
    const paused = await t.admin('POST', '/admin/payouts/pause', { account: accountId, mode: 'test' });
    expect(paused.status).toBe(200);
    expect(paused.body).toEqual({ account: accountId, mode: 'test', payouts_paused: true });
    expect((await t.admin('POST', '/admin/payouts/pause', { account: accountId, mode: 'test' })).body.payouts_paused).toBe(true);
    expect((await ledger.balance(key)).payouts_paused).toBe(true);

    const skipped = await t.admin('POST', '/admin/payouts/run', { mode: 'test', account: accountId });
    expect([skipped.status, skipped.body.error.code]).toEqual([400, 'payouts_paused']);
    expect((await t.admin('POST', '/admin/payouts/run', { mode: 'test' })).body.items.map((p: any) => p.amount_cents)).not.toContain(1700);
    expect((await ledger.balance(key)).summary.balance_cents).toBe(1700);

    const resumed = await t.admin('POST', '/admin/payouts/resume', { account: accountId, mode: 'test' });
    expect(resumed.body).toEqual({ account: accountId, mode: 'test', payouts_paused: false });
    const paid = await t.admin('POST', '/admin/payouts/run', { mode: 'test', account: accountId });
    expect(paid.body.items).toEqual([expect.objectContaining({ object: 'payout', amount_cents: 1700, status: 'paid' })]);
    const body = await ledger.balance(key);
    expect(body.payouts_paused).toBe(false);
    expect(body.summary).toMatchObject({ balance_cents: 0, paid_out_cents: 1700 });
  });

  it('pays every payable account of the mode and no other mode', async () => {
    const a = await t.accountWithKey();
    const b = await t.accountWithKey();
    await ledger.sale(a.accountId, 'test', { amount_cents: 1000 });
    await ledger.sale(b.accountId, 'test', { amount_cents: 3000 });
    await ledger.sale(b.accountId, 'live', { amount_cents: 5000 });
    const run = await t.admin('POST', '/admin/payouts/run', { mode: 'test' });
    expect(run.body.items.map((p: any) => p.amount_cents).sort()).toEqual([2550, 850]);
    expect((await ledger.balance(b.key)).summary.balance_cents).toBe(0);
    const live = await t.admin('POST', '/admin/payouts/run', { mode: 'live' });
    expect(live.body.items.map((p: any) => p.amount_cents)).toEqual([4250]);
  });

  it('rejects bad operator input with a clear error and changes nothing', async () => {
    const { accountId, key } = await t.accountWithKey();
    await ledger.sale(accountId, 'test');
    const before = await ledger.balance(key);
    const cases: [string, string, unknown, number, string][] = [
      ['POST', '/admin/payouts/run', {}, 400, 'validation_failed'],
      ['POST', '/admin/payouts/run', { mode: 'prod' }, 400, 'validation_failed'],
      ['POST', '/admin/payouts/run', { mode: 'test', account: 'acct_missing' }, 404, 'not_found'],
      ['POST', '/admin/payouts/pause', { account: accountId }, 400, 'validation_failed'],
      ['POST', '/admin/payouts/pause', { account: 'nobody', mode: 'test' }, 404, 'not_found'],
      ['POST', '/admin/payouts/resume', { mode: 'test' }, 400, 'validation_failed'],
      ['GET', '/admin/ledger/verify?mode=prod', undefined, 400, 'validation_failed'],
      ['GET', '/admin/ledger/verify?account=nobody', undefined, 404, 'not_found'],
      ['GET', `/admin/ledger/export?account=${accountId}`, undefined, 400, 'validation_failed'],
      ['GET', '/admin/ledger/export?mode=test', undefined, 400, 'validation_failed'],
      ['GET', '/admin/ledger/export?account=nobody&mode=test', undefined, 404, 'not_found'],
      ['GET', `/admin/ledger/export?account=${accountId}&account=x&mode=test`, undefined, 400, 'validation_failed'],
      ['GET', `/admin/ledger/export?account=${accountId}&mode=test&mode=live`, undefined, 400, 'validation_failed'],
    ];
    for (const [method, url, body, status, code] of cases) {
      const res = await t.admin(method, url, body);
      expect({ url, body, status: res.status, code: res.body?.error?.code }).toEqual({ url, body, status, code });
    }
    const noToken = await t.request('POST', '/admin/payouts/run', { body: { mode: 'test' } });
    expect(noToken.status).toBe(401);
    expect(await ledger.balance(key)).toEqual(before);
  });

  it('exports a ledger oldest first', async () => {
    const { accountId, key } = await t.accountWithKey();
    await ledger.sale(accountId, 'test', { purchase_id: 'pur_x1' });
    await ledger.sale(accountId, 'test', { purchase_id: 'pur_x2' });
    await ledger.refund(accountId, 'test', 'pur_x1');
    const res = await t.admin('GET', `/admin/ledger/export?account=${accountId}&mode=test`);
    expect(res.status).toBe(200);
    expect(res.body.items).toEqual([...(await ledger.balance(key)).items].reverse());
    expect(res.body.items.map((i: any) => i.type)).toEqual(['sale', 'sale', 'refund']);
    const live = await t.admin('GET', `/admin/ledger/export?account=${accountId}&mode=live`);
    expect(live.body).toEqual({ items: [] });
  });

  describe('ledger verify', () => {
    const verify = async (query = '') => (await t.admin('GET', `/admin/ledger/verify${query}`)).body;
    let target: { accountId: string; key: string };
    let saleId: string;

    beforeAll(async () => {
      target = await t.accountWithKey();
      await ledger.sale(target.accountId, 'test', { purchase_id: 'pur_v1', amount_cents: 1000 });
      await ledger.payouts('test', target.accountId);
      await ledger.sale(target.accountId, 'test', { purchase_id: 'pur_v2', amount_cents: 3000 });
      await ledger.refund(target.accountId, 'test', 'pur_v1');
      saleId = (await ledger.balance(target.key)).items.find((i) => i.source.purchase_id === 'pur_v2').id;
    });

    afterEach(async () => {
      await t.app.get(ProjectionRunner).rebuild(['balance_transactions']);
      expect((await verify()).ok).toBe(true);
    });

    it('passes when the read model matches the event log', async () => {
      const report = await verify();
      expect(report).toMatchObject({ ok: true, first_difference: null });
      expect(report.transactions_checked).toBeGreaterThanOrEqual(4);
      expect(await verify(`?account=${target.accountId}&mode=test`)).toMatchObject({ ok: true, ledgers_checked: 1, transactions_checked: 4 });
    });

    it('names the first tampered field of a balance transaction', async () => {
      await t.db.query('UPDATE balance_transactions SET net_cents = net_cents + 1 WHERE id = $1', [saleId]);
      expect(await verify()).toMatchObject({
        ok: false,
        first_difference: { account_id: target.accountId, mode: 'test', transaction_id: saleId, field: 'net_cents', expected: 2550, actual: 2551 },
      });
    });

    it('detects a tampered status, summary, pause flag and a deleted row', async () => {
      await t.db.query("UPDATE balance_transactions SET status = 'paid' WHERE id = $1", [saleId]);
      expect((await verify()).first_difference).toMatchObject({ transaction_id: saleId, field: 'status', expected: 'pending', actual: 'paid' });
      await t.app.get(ProjectionRunner).rebuild(['balance_transactions']);

      await t.db.query('UPDATE ledger_accounts SET balance_cents = 0 WHERE account_id = $1', [target.accountId]);
      expect((await verify()).first_difference).toMatchObject({ transaction_id: null, field: 'summary.balance_cents', expected: 1700, actual: 0 });
      await t.app.get(ProjectionRunner).rebuild(['balance_transactions']);

      await t.db.query('UPDATE ledger_accounts SET payouts_paused = true WHERE account_id = $1', [target.accountId]);
      expect((await verify()).first_difference).toMatchObject({ field: 'payouts_paused', expected: false, actual: true });
      await t.app.get(ProjectionRunner).rebuild(['balance_transactions']);

      await t.db.query('DELETE FROM balance_transactions WHERE id = $1', [saleId]);
      expect((await verify(`?account=${target.accountId}`)).first_difference).toMatchObject({ transaction_id: saleId, field: 'id' });
    });

    it('compares at the read model\'s checkpoint: a sale the projection has not applied yet is no difference', async () => {
      const stalled = await stallProjections(t);
      try {
        const before = await verify(`?account=${target.accountId}&mode=test`);
        await ledger.sale(target.accountId, 'test', { purchase_id: 'pur_v3', amount_cents: 500 });
        // The events are read outside the read model's snapshot, up to its checkpoint only.
        expect(await verify(`?account=${target.accountId}&mode=test`)).toEqual(before);
        expect(before).toMatchObject({ ok: true, transactions_checked: 4 });
      } finally {
        await stalled.resume();
      }
      expect(await verify(`?account=${target.accountId}&mode=test`)).toMatchObject({ ok: true, transactions_checked: 5 });
    });
  });
});
