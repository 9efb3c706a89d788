import { EntitlementBackfill } from '../../src/commerce/entitlement-backfill';
import { EVENT_STORE, EventStore } from '../../src/event-store/event-store';
import { Streams } from '../../src/platform/streams';
import { publishModel } from '../catalog/catalog-client';
import { startTestApp, TestApp } from '../support/app';
import { buy, eventsOfType, openCheckout } from './commerce-client';

/**
 * Issue 10: a purchase recorded before entitlement streams existed must still stop its
 * buyer from paying for the asset again, once the backfill has run.
 */
describe('entitlement backfill for purchases from before entitlement streams', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('gives an earlier purchase its entitlement, so its buyer cannot be charged twice', async () => {
    const seller = await t.accountWithKey({ name: 'Backfill Seller' });
    const first = await t.accountWithKey({ scopes: ['models:read'] });
    const legacyBuyer = await t.accountWithKey({ scopes: ['models:read'] });
    const model = await publishModel(t, seller.key, { title: 'Backfilled', price_cents: 1500 });
    await buy(t, first.key, model.id);

    // A purchase as the code before entitlement streams recorded it: on its session's stream only.
    const [template] = (await eventsOfType(t, 'PurchaseCompleted')).map((e) => e.data);
    const legacy = {
      ...template,
      session_id: 'cs_test_legacy1',
      purchase_id: 'pur_legacy1',
      buyer_account_id: legacyBuyer.accountId,
      purchase: { ...template.purchase, id: 'pur_legacy1', checkout_session_id: 'cs_test_legacy1' },
    };
    await t.app.get<EventStore>(EVENT_STORE).append(Streams.checkout('test', 'cs_test_legacy1'), [{ type: 'PurchaseCompleted', data: legacy }], 'no_stream');
    await t.db.query(`DELETE FROM schema_migrations WHERE name = 'backfill:entitlement_streams'`);

    await t.app.get(EntitlementBackfill).run();

    const again = await openCheckout(t, legacyBuyer.key, { asset: model.id });
    expect(again.status).toBe(400);
    expect(again.body.error.code).toBe('invalid_request');
    // The buyer who bought through today's code is unaffected, and a second run changes nothing.
    await t.app.get(EntitlementBackfill).run();
    expect((await openCheckout(t, first.key, { asset: model.id })).status).toBe(400);
    const entitled = await eventsOfType(t, 'AssetEntitled');
    expect(entitled.filter((e) => e.data.buyer_account_id === legacyBuyer.accountId)).toHaveLength(1);
  });
});
