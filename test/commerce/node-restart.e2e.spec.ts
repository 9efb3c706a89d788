import { EsdbStandIn } from '../support/esdb-standin';
import { startTestApp, TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { publishModel } from '../catalog/catalog-client';
import { createEndpoint, ENCRYPTION_KEY } from '../webhooks/helpers';
import { startReceiver } from '../webhooks/receiver';
import { buy } from './commerce-client';

/**
 * Issue 45: purchases and refunds made while the EventStoreDB node restarts (the stand-in
 * passes through a not-ready window and reloads its persistent groups from their last
 * checkpoints, as the server does). The requests ride it out; nothing is lost or doubled,
 * counted in the read models (purchases, the seller's ledger) and at the webhook receiver.
 */
describe('purchases and refunds across an EventStoreDB node restart', () => {
  let standIn: EsdbStandIn;
  let t: TestApp;
  beforeAll(async () => {
    standIn = await new EsdbStandIn().start();
    t = await startTestApp({ env: { EVENTSTORE_URL: standIn.url, WEBHOOK_RETRY_SCHEDULE: '0,1,1', WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_ENCRYPTION_KEY: ENCRYPTION_KEY } });
  });
  afterAll(async () => {
    await t?.close();
    await standIn?.stop();
  });

  it('books every sale and refund once and delivers each event once, whatever the restarts interrupted', async () => {
    const receiver = await startReceiver(() => 204);
    try {
      const seller = await t.accountWithKey({ mode: 'test' });
      await createEndpoint(t, seller.key, receiver.url, ['listing.purchased', 'purchase.refunded']);
      const model = await publishModel(t, seller.key, { price_cents: 1500 });
      const buyers = await Promise.all([1, 2, 3, 4].map(() => t.accountWithKey({ mode: 'test', scopes: ['models:read'] })));

      // Two purchases before the restart, two while the node restarts (through its not-ready window).
      const sessions = [await buy(t, buyers[0].key, model.id), await buy(t, buyers[1].key, model.id)];
      const restarting = standIn.restart(300);
      sessions.push(...(await Promise.all([buy(t, buyers[2].key, model.id), buy(t, buyers[3].key, model.id)])));
      await restarting;

      const purchaseOf = async (key: string) => (await t.request('GET', '/v1/purchases?limit=10', { key })).body.items as { id: string; status: string }[];
      const bought = await Promise.all(buyers.map((b) => purchaseOf(b.key)));
      expect(bought.map((p) => p.length)).toEqual([1, 1, 1, 1]);

      // A refund while the node restarts again.
      const again = standIn.restart(300);
      const refunded = await t.admin('POST', `/admin/purchases/${bought[0][0].id}/refund`);
      await again;
      expect([refunded.status, refunded.body.status]).toEqual([200, 'refunded']);

      const ledger = async () => (await t.request('GET', '/v1/balance_transactions?limit=100', { key: seller.key })).body.items as { type: string; source?: unknown }[];
      await eventually(async () => (await ledger()).length >= 5, 20_000, 'four sales and a refund in the seller ledger');
      await eventually(() => receiver.received.length >= 5, 20_000, 'five deliveries');
      await new Promise((r) => setTimeout(r, 1500)); // anything sent twice would have come by now
      const types = (await ledger()).map((l) => l.type).sort();
      expect(types).toEqual(['refund', 'sale', 'sale', 'sale', 'sale']);
      const events = receiver.events();
      expect(events.map((e: { type: string }) => e.type).sort()).toEqual(['listing.purchased', 'listing.purchased', 'listing.purchased', 'listing.purchased', 'purchase.refunded']);
      expect(new Set(events.map((e: { id: string }) => e.id)).size).toBe(5);
    } finally {
      await receiver.close();
    }
  });
});
