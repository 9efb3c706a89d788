import { startTestApp } from '../support/app';
import { stallProjections } from '../support/stalled-projections';
import { expectLedgerInvariants, ledgerDriver } from './support';

/** Issue 9: ledger commands find the account on its stream and decide on its ledger stream, not on read models. */
describe('ledger commands decide on streams, not on lagging read models', () => {
  let t: Awaited<ReturnType<typeof startTestApp>>;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('pauses, resumes, records a sale and pays out an account created a moment ago, while no projection runs', async () => {
    const ledger = ledgerDriver(t);
    const stalled = await stallProjections(t);
    const account = await t.admin('POST', '/admin/accounts', { name: 'Fresh Seller', email: 'fresh@example.com' });
    const who = { account: 'fresh-seller', mode: 'test' };
    const paused = await t.admin('POST', '/admin/payouts/pause', who);
    expect([paused.status, paused.body]).toEqual([200, { account: account.body.id, mode: 'test', payouts_paused: true }]);
    expect((await t.admin('POST', '/admin/payouts/resume', who)).body.payouts_paused).toBe(false);
    const destination = await t.admin('POST', '/admin/payouts/destination', { ...who, stripe_account: 'acct_1FreshSeller' });
    expect([destination.status, destination.body]).toEqual([200, { account: account.body.id, mode: 'test', stripe_account: 'acct_1FreshSeller' }]);
    const empty = await t.admin('POST', '/admin/payouts/run', who);
    expect([empty.status, empty.body.error.code]).toEqual([400, 'nothing_to_pay']);

    const sale = await ledger.sale(account.body.id, 'test', { amount_cents: 2000 });
    expect(sale).toMatchObject({ type: 'sale', amount_cents: 2000, net_cents: 1700 });
    const paid = await t.admin('POST', '/admin/payouts/run', who);
    expect([paid.status, paid.body.items]).toEqual([200, [expect.objectContaining({ object: 'payout', amount_cents: 1700, status: 'paid' })]]);

    await stalled.resume();
    const key = await t.admin('POST', '/admin/keys', { account: account.body.id, mode: 'test', scopes: ['payouts:read'] });
    const balance = await ledger.balance(key.body.key);
    expect(balance.summary).toMatchObject({ balance_cents: 0, earned_cents: 1700, paid_out_cents: 1700 });
    expect(balance.items.map((i: any) => i.type).sort()).toEqual(['payout', 'sale']);
    expect(balance.payouts_paused).toBe(false);
  });

  it('decides on what other instances recorded since this one last touched the ledger', async () => {
    const other = await startTestApp({ shared: t.database });
    try {
      const [here, there] = [ledgerDriver(t), ledgerDriver(other)];
      const account = await t.admin('POST', '/admin/accounts', { name: 'Busy Seller', email: 'busy@example.com' });
      const id = account.body.id;
      await t.admin('POST', '/admin/payouts/destination', { account: id, mode: 'test', stripe_account: 'acct_1BusySeller' });
      await here.sale(id, 'test', { purchase_id: 'pur_here1', amount_cents: 1000 });
      await there.sale(id, 'test', { purchase_id: 'pur_there1', amount_cents: 2000 });
      await there.sale(id, 'test', { purchase_id: 'pur_there2', amount_cents: 4000 });

      // This instance's state of the ledger is older than the other's sales: a repeat of
      // one records nothing, and a refund of the other finds it.
      const repeat = await here.sale(id, 'test', { purchase_id: 'pur_there1', amount_cents: 2000 });
      expect(repeat).toMatchObject({ type: 'sale', amount_cents: 2000, source: { purchase_id: 'pur_there1' } });
      expect(await here.refund(id, 'test', 'pur_there2')).toMatchObject({ type: 'refund', amount_cents: -4000 });
      await there.sale(id, 'test', { purchase_id: 'pur_there3', amount_cents: 8000 });

      const paid = await t.admin('POST', '/admin/payouts/run', { account: id, mode: 'test' });
      expect([paid.status, paid.body.items.map((p: any) => p.amount_cents)]).toEqual([200, [(1000 + 2000 + 8000) * 0.85]]);
      const again = await other.admin('POST', '/admin/payouts/run', { account: id, mode: 'test' });
      expect([again.status, again.body.error?.code]).toEqual([400, 'nothing_to_pay']);

      const key = await t.admin('POST', '/admin/keys', { account: id, mode: 'test', scopes: ['payouts:read'] });
      const balance = await here.balance(key.body.key);
      const oldestFirst = [...balance.items].reverse();
      expect(oldestFirst.map((i: any) => i.type)).toEqual(['sale', 'sale', 'sale', 'refund', 'sale', 'payout']);
      expectLedgerInvariants(oldestFirst, balance.summary);
      expect(balance.summary).toMatchObject({ sale_count: 4, refund_count: 1, balance_cents: 0 });
    } finally {
      await other.close();
    }
  });

  it('records many sales of one seller at once, none refused for a lost race', async () => {
    const ledger = ledgerDriver(t);
    const account = await t.admin('POST', '/admin/accounts', { name: 'Popular Seller', email: 'popular@example.com' });
    const sales = await Promise.all(Array.from({ length: 20 }, (_, i) => ledger.sale(account.body.id, 'test', { purchase_id: `pur_rush${i}`, amount_cents: 100 * (i + 1) })));
    expect(new Set(sales.map((s: any) => s.id)).size).toBe(20);
    const key = await t.admin('POST', '/admin/keys', { account: account.body.id, mode: 'test', scopes: ['payouts:read'] });
    const balance = await ledger.balance(key.body.key);
    expect(balance.summary).toMatchObject({ sale_count: 20, gross_cents: 100 * ((20 * 21) / 2) });
  });
});
