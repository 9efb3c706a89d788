import { publishModel } from '../catalog/catalog-client';
import { buy, DISPUTED } from './commerce-client';
import { startTestApp, TestApp } from '../support/app';
import { serveForCli, svc } from '../support/cli';

/**
 * Issue 23, disputes in the sandbox: card 4000000000000259 pays and is disputed a moment
 * later; `svc disputes list` and `svc disputes close` settle it as an operator would.
 */
describe('disputes in the sandbox: the disputed card, svc disputes list and close', () => {
  let t: TestApp;
  let restoreEnv: () => void;
  let seller: { accountId: string; key: string };
  let buyer: { accountId: string; key: string };
  beforeAll(async () => {
    t = await startTestApp();
    restoreEnv = await serveForCli(t);
    seller = await t.accountWithKey({ name: 'Disputed Seller' });
    buyer = await t.accountWithKey();
  });
  afterAll(async () => {
    restoreEnv();
    await t.close();
  });

  const balance = async () => (await t.request('GET', '/v1/balance', { key: seller.key })).body;
  const purchaseOf = async (sessionId: string) =>
    (await t.request('GET', '/v1/purchases?limit=100', { key: buyer.key })).body.items.find((p: any) => p.checkout_session_id === sessionId);
  const download = (modelId: string) => t.request('POST', `/v1/models/${modelId}/download`, { key: buyer.key });
  const disputes = async (...args: string[]) => JSON.parse((await svc('disputes', 'list', '--mode', 'test', '--json', ...args)).stdout).items as any[];
  const lines = async (purchaseId: string) =>
    (await t.request('GET', '/v1/balance_transactions?limit=200', { key: seller.key })).body.items
      .filter((i: any) => i.source?.purchase_id === purchaseId)
      .map((i: any) => [i.type, i.net_cents]);
  const accountBalance = async (account: string) => {
    const trial = (await t.admin('GET', '/admin/ledger/trial-balance?mode=test')).body;
    return trial.accounts.find((a: any) => a.account === account)?.balance_cents ?? 0;
  };
  const processorRecords = async (kind: string) => (await t.db.query(`SELECT * FROM sandbox_processor_records WHERE mode = 'test' AND kind = $1`, [kind])).rows;

  it('withholds the net of a disputed sale; lost, the purchase is disputed, its download revoked and the platform loses its fee', async () => {
    const model = await publishModel(t, seller.key, { title: 'Disputed Gripper', price_cents: 2599 });
    const session = await buy(t, buyer.key, model.slug, DISPUTED);
    const purchase = await purchaseOf(session.id);
    const [dispute] = await disputes();
    expect(dispute).toMatchObject({ object: 'dispute', purchase_id: purchase.id, amount_cents: 2599, dispute_fee_cents: 1500, currency: 'usd', status: 'open', closed_at: null });
    expect(dispute.id).toMatch(/^sbx_dp_/);
    // Open: the net is withheld, the purchase stays paid and downloadable, and nothing is paid out of it.
    expect(await balance()).toMatchObject({ available_cents: 0, in_transit_cents: 0, withheld_cents: 2209 });
    expect(purchase.status).toBe('paid');
    expect((await download(model.id)).status).toBe(200);
    expect((await t.admin('POST', '/admin/payouts/run', { mode: 'test' })).body.items).toEqual([]);
    const refund = await svc('purchases', 'refund', purchase.id);
    expect([refund.code, refund.stderr]).toEqual([1, expect.stringContaining('charge_disputed')]);
    expect(await processorRecords('refund')).toHaveLength(0);
    expect(await accountBalance('platform:fee_revenue')).toBe(390);

    const closed = await svc('disputes', 'close', dispute.id, '--lost');
    expect(closed.code).toBe(0);
    expect(closed.stdout).toContain(`dispute ${dispute.id} lost`);
    expect((await purchaseOf(session.id)).status).toBe('disputed');
    expect((await download(model.id)).status).toBe(402);
    expect(await lines(purchase.id)).toEqual([
      ['dispute', -2209],
      ['sale', 2209],
    ]);
    expect(await balance()).toMatchObject({ available_cents: 0, withheld_cents: 0 });
    expect([await accountBalance('platform:fee_revenue'), await accountBalance('platform:disputes')]).toEqual([0, 0]);
    // The first close at the processor is final: the other outcome is refused and changes nothing.
    const again = await svc('disputes', 'close', dispute.id, '--won');
    expect([again.code, again.stderr]).toEqual([1, expect.stringContaining('dispute_closed')]);
    expect(await processorRecords('dispute_reversal')).toHaveLength(0);
    expect((await disputes('--status', 'lost')).map((d) => d.id)).toEqual([dispute.id]);
  });

  it('won: the withheld net is released, the purchase stays paid, and the books reconcile with the processor', async () => {
    const model = await publishModel(t, seller.key, { title: 'Contested Arm', price_cents: 1000 });
    const session = await buy(t, buyer.key, model.slug, DISPUTED);
    const purchase = await purchaseOf(session.id);
    const [dispute] = await disputes('--status', 'open');
    expect(dispute.purchase_id).toBe(purchase.id);
    expect(await balance()).toMatchObject({ available_cents: 0, withheld_cents: 850 });

    expect((await svc('disputes', 'close', dispute.id, '--won')).code).toBe(0);
    // Closed again the same way: it was won, once.
    expect((await svc('disputes', 'close', dispute.id, '--won')).code).toBe(0);
    expect(await lines(purchase.id)).toEqual([
      ['dispute_reversal', 850],
      ['dispute', -850],
      ['sale', 850],
    ]);
    expect(await balance()).toMatchObject({ available_cents: 850, withheld_cents: 0 });
    expect((await purchaseOf(session.id)).status).toBe('paid');
    expect((await download(model.id)).status).toBe(200);
    expect(await processorRecords('dispute_reversal')).toHaveLength(1);
    expect([await accountBalance('platform:disputes'), await accountBalance(`creator:${seller.accountId}:withheld`)]).toEqual([0, 0]);

    const reconcile = await svc('ledger', 'reconcile', '--mode', 'test', '--json');
    expect(reconcile.code).toBe(0);
    expect(JSON.parse(reconcile.stdout)).toMatchObject({ ok: true, missing_in_ledger: [], missing_at_processor: [], amount_mismatches: [] });
    expect((await svc('ledger', 'verify', '--mode', 'test')).code).toBe(0);
  });

  it('refuses to close a dispute that does not exist, or without one outcome, changing nothing', async () => {
    const missing = await svc('disputes', 'close', 'sbx_dp_nothing', '--won');
    expect([missing.code, missing.stderr]).toEqual([1, expect.stringContaining('not_found')]);
    expect((await svc('disputes', 'close', 'sbx_dp_nothing')).code).toBe(2);
    const bad = await t.admin('POST', '/admin/disputes/sbx_dp_nothing/close', { outcome: 'maybe' });
    expect([bad.status, bad.body.error.code]).toEqual([400, 'validation_failed']);
    const status = await t.admin('GET', '/admin/disputes?mode=test&status=pending');
    expect([status.status, status.body.error.code]).toEqual([400, 'validation_failed']);
    expect(await processorRecords('dispute_lost')).toHaveLength(1);
  });
});
