import { startTestApp, TestApp } from '../support/app';
import { stallProjections } from '../support/stalled-projections';
import { ledgerDriver } from './support';

/** Issue 9: ledger commands find the account on its stream and decide on its ledger stream, not on read models. */
describe('ledger commands decide on streams, not on lagging read models', () => {
  let t: TestApp;
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
});
