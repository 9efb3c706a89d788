import { publishModel } from '../catalog/catalog-client';
import { startTestApp, TestApp } from '../support/app';
import { serveForCli, svc } from '../support/cli';
import { createEndpoint } from '../webhooks/helpers';
import { eventually } from '../support/eventually';
import { startReceiver } from '../webhooks/receiver';
import { buy, eventsOfType } from './commerce-client';

describe('refunds (svc purchases refund) and what a purchase tells the seller', () => {
  let t: TestApp;
  let seller: { accountId: string; key: string };
  let buyer: { accountId: string; key: string };
  let restoreEnv: () => void;

  beforeAll(async () => {
    t = await startTestApp();
    seller = await t.accountWithKey({ name: 'Seller Co' });
    buyer = await t.accountWithKey({ name: 'Buyer Inc', scopes: ['models:read'] });
    restoreEnv = await serveForCli(t);
  });
  afterAll(async () => {
    restoreEnv();
    await t.close();
  });

  const purchaseOf = async (sessionId: string) =>
    (await t.request('GET', '/v1/purchases?limit=100', { key: buyer.key })).body.items.find((p: any) => p.checkout_session_id === sessionId);

  it('refunds through the CLI: the purchase turns refunded, the download is 402 again and the seller ledger has the matching debit', async () => {
    const model = await publishModel(t, seller.key, { title: 'Refundable', price_cents: 2000 });
    const session = await buy(t, buyer.key, model.id);
    const purchase = await purchaseOf(session.id);

    const res = await svc('purchases', 'refund', purchase.id, '--json');
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({ ...purchase, status: 'refunded' });
    expect(await purchaseOf(session.id)).toEqual({ ...purchase, status: 'refunded' });
    expect((await t.request('POST', `/v1/models/${model.id}/download`, { key: buyer.key })).status).toBe(402);

    const balance = (await t.request('GET', '/v1/balance_transactions', { key: seller.key })).body;
    const lines = balance.items.filter((i: any) => i.source.purchase_id === purchase.id).map((i: any) => [i.type, i.amount_cents, i.fee_cents, i.net_cents]);
    expect(lines).toEqual([
      ['refund', -2000, -300, -1700],
      ['sale', 2000, 300, 1700],
    ]);

    // Bought again after the refund: a new purchase, entitled again.
    await buy(t, buyer.key, model.id);
    expect((await t.request('POST', `/v1/models/${model.id}/download`, { key: buyer.key })).status).toBe(200);
  });

  it('refuses an unknown or already refunded purchase with a clear error and records nothing', async () => {
    const model = await publishModel(t, seller.key, { title: 'Once', price_cents: 1500 });
    const purchase = await purchaseOf((await buy(t, buyer.key, model.id)).id);
    expect((await svc('purchases', 'refund', purchase.id)).code).toBe(0);
    const refundsBefore = (await eventsOfType(t, 'RefundRecorded')).length;

    const again = await svc('purchases', 'refund', purchase.id);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^svc: already_refunded: /);
    const unknown = await svc('purchases', 'refund', 'pur_doesnotexist');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^svc: not_found: /);
    expect((await svc('purchases', 'refund')).code).toBe(2);

    expect((await eventsOfType(t, 'RefundRecorded')).length).toBe(refundsBefore);
    expect((await eventsOfType(t, 'PurchaseRefunded')).filter((e) => e.data.purchase_id === purchase.id)).toHaveLength(1);
  });

  it('records one refund when the same purchase is refunded concurrently', async () => {
    const model = await publishModel(t, seller.key, { title: 'Raced refund', price_cents: 1200 });
    const purchase = await purchaseOf((await buy(t, buyer.key, model.id)).id);
    const answers = await Promise.all(Array.from({ length: 20 }, () => t.admin('POST', `/admin/purchases/${purchase.id}/refund`)));
    // Only the refund that was recorded answers 200; every other one learns it came too late.
    expect(answers.filter((a) => a.status === 200).map((a) => a.body)).toEqual([{ ...purchase, status: 'refunded' }]);
    for (const a of answers.filter((x) => x.status !== 200)) expect([a.status, a.body.error.code]).toEqual([400, 'already_refunded']);
    expect((await eventsOfType(t, 'PurchaseRefunded')).filter((e) => e.data.purchase_id === purchase.id)).toHaveLength(1);
    expect((await eventsOfType(t, 'RefundRecorded')).filter((e) => e.data.purchase_id === purchase.id)).toHaveLength(1);
  });

  it('sends listing.purchased to the seller with the purchase and the listing', async () => {
    const receiver = await startReceiver();
    try {
      const endpoint = await createEndpoint(t, seller.key, receiver.url, ['listing.purchased']);
      const model = await publishModel(t, seller.key, { title: 'Announced', price_cents: 3000 });
      const session = await buy(t, buyer.key, model.id);
      const purchase = await purchaseOf(session.id);
      const [event] = await eventually(() => receiver.events().length > 0 && receiver.events(), 15000, 'listing.purchased');
      expect(event).toMatchObject({
        type: 'listing.purchased',
        data: { purchase, listing: { id: model.id, slug: model.slug, title: 'Announced', price: { amount: 3000, currency: 'usd' } } },
      });
      expect(endpoint.id).toMatch(/^we_/);
    } finally {
      await receiver.close();
    }
  });

  it('sends purchase.refunded to the seller with the purchase as refunded, and tells the buyer nothing', async () => {
    const receiver = await startReceiver();
    const buyerReceiver = await startReceiver();
    try {
      await createEndpoint(t, seller.key, receiver.url, ['purchase.refunded']);
      const buyerWithHooks = await t.accountWithKey();
      await createEndpoint(t, buyerWithHooks.key, buyerReceiver.url, ['purchase.refunded']);
      const model = await publishModel(t, seller.key, { title: 'Taken Back', price_cents: 1500 });
      const session = await buy(t, buyerWithHooks.key, model.id);
      const purchase = (await t.request('GET', '/v1/purchases?limit=100', { key: buyerWithHooks.key })).body.items.find((p: any) => p.checkout_session_id === session.id);
      expect((await svc('purchases', 'refund', purchase.id)).code).toBe(0);
      const [event] = await eventually(() => receiver.events().length > 0 && receiver.events(), 15000, 'purchase.refunded');
      expect(event).toMatchObject({ type: 'purchase.refunded', data: { purchase: { ...purchase, status: 'refunded' } } });
      expect(buyerReceiver.received).toHaveLength(0);
    } finally {
      await receiver.close();
      await buyerReceiver.close();
    }
  });
});
