import { publishModel } from '../catalog/catalog-client';
import { startTestApp, TestApp } from '../support/app';
import { stallProjections } from '../support/stalled-projections';
import { buy, eventsOfType } from './commerce-client';

/**
 * Issue 9: a download is a command (it records DownloadRecorded), so whether the buyer holds
 * the asset is read from the entitlement and session streams, not from the purchases read
 * model, which may lag behind a payment or a refund.
 */
describe('download entitlement decides on streams, not on the lagging purchases read model', () => {
  let t: TestApp;
  let seller: { accountId: string; key: string };
  let buyer: { accountId: string; key: string };
  beforeAll(async () => {
    t = await startTestApp();
    seller = await t.accountWithKey({ name: 'Stream Seller' });
    buyer = await t.accountWithKey({ name: 'Stream Buyer', scopes: ['models:read'] });
  });
  afterAll(() => t.close());

  const download = (modelId: string) => t.request('POST', `/v1/models/${modelId}/download`, { key: buyer.key });

  it('lets a buyer download what they paid a moment ago, and refuses it once refunded, while no projection runs', async () => {
    const model = await publishModel(t, seller.key, { title: 'Streamed Gripper', price_cents: 1800 });
    const stalled = await stallProjections(t);
    try {
      expect((await download(model.id)).status).toBe(402);
      const session = await buy(t, buyer.key, model.id);
      // The read model has not seen the payment.
      expect((await t.request('GET', '/v1/purchases', { key: buyer.key })).body.items).toEqual([]);
      expect((await download(model.id)).status).toBe(200);
    } finally {
      await stalled.resume();
    }

    const [completed] = (await eventsOfType(t, 'PurchaseCompleted')).filter((e) => e.data.purchase.asset.id === model.id);
    const again = await stallProjections(t);
    try {
      const refund = await t.admin('POST', `/admin/purchases/${completed.data.purchase_id}/refund`);
      expect([refund.status, refund.body.status]).toEqual([200, 'refunded']);
      // Neither the purchases read model nor fulfilment (which ends the entitlement) has seen the refund.
      expect((await t.request('GET', '/v1/purchases', { key: buyer.key })).body.items.map((p: any) => p.status)).toEqual(['paid']);
      const refused = await download(model.id);
      expect([refused.status, refused.body.error.code]).toEqual([402, 'purchase_required']);
    } finally {
      await again.resume();
    }
    expect((await download(model.id)).status).toBe(402);
  });
});
