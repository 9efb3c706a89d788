import { Streams } from '../../src/platform/streams';
import type { Mode } from '../../src/platform/mode';
import { randomBytes, randomUUID } from 'node:crypto';
import { EVENT_STORE, EventStore } from '../../src/event-store/event-store';
import type { TestApp } from '../support/app';

/** One sealing key for every app of a file, so a second instance can open the secrets. */
export const ENCRYPTION_KEY = randomBytes(32).toString('base64');

/**
 * Appends a domain event as the catalog or commerce context will (their streams do not
 * exist yet, so a test stream stands in).
 */
export async function emit(t: TestApp, type: string, data: Record<string, unknown>): Promise<{ id: string; position: string }> {
  const id = randomUUID();
  // PayoutPaid belongs on its ledger stream: the ledger projection orders rows by stream revision.
  // Others on a stream of their own, in a category the service reads (EventStoreDB's adapter
  // reads only those); projections go by event type, never by stream category.
  const stream =
    type === 'PayoutPaid' ? Streams.ledger(data.mode as Mode, data.account_id as string) : Streams.webhookEndpoint('test', `webhooktest-${randomUUID()}`);
  const result = await t.app.get<EventStore>(EVENT_STORE).append(stream, [{ id, type, data }], 'any');
  return { id, position: result.position };
}

export const evtId = (uuid: string) => `evt_${uuid.replace(/-/g, '')}`;

/** A PayoutPaid of the ledger's full shape, since the ledger projection reads these too. */
export function payoutPaid(accountId: string, mode: 'test' | 'live', amount = 1000) {
  const now = new Date().toISOString();
  return {
    payout: { id: `po_${randomUUID().slice(0, 8)}`, object: 'payout', amount_cents: amount, currency: 'usd', status: 'paid', created_at: now, arrival_date: now },
    account_id: accountId,
    mode,
    transaction_id: `txn_${randomUUID().replace(/-/g, '').slice(0, 24)}`,
    description: 'Payout',
  };
}

export async function createEndpoint(t: TestApp, key: string, url: string, events: string[]) {
  const res = await t.request('POST', '/v1/webhook_endpoints', { key, body: { url, events } });
  if (res.status !== 201) throw new Error(`endpoint create failed: ${res.text}`);
  return res.body as { id: string; secret: string };
}

export async function deliveries(t: TestApp, key: string, endpointId: string) {
  const res = await t.request('GET', `/v1/webhook_endpoints/${endpointId}/events?limit=100`, { key });
  if (res.status !== 200) throw new Error(`log read failed: ${res.text}`);
  return res.body.items as any[];
}

/** A PurchaseCompleted of the commerce context's full shape (the purchases read model and fulfilment read it). */
export function purchaseCompleted(sellerId: string, buyerId: string, listing: { id: string; slug: string; title: string }, purchaseId: string) {
  const now = new Date().toISOString();
  const sessionId = `cs_test_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
  const purchase = { id: purchaseId, object: 'purchase', asset: listing, amount_cents: 1000, currency: 'usd', status: 'paid', checkout_session_id: sessionId, created_at: now };
  return { session_id: sessionId, purchase_id: purchaseId, mode: 'test', buyer_account_id: buyerId, seller_account_id: sellerId, purchase, listing, payment_reference: `pay_${purchaseId}`, completed_at: now };
}
