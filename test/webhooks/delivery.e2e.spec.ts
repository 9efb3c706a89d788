import Stripe from 'stripe';
import { FAN_OUT_GROUP, WebhookFanOut } from '../../src/webhooks/fan-out';
import { ADMIN_TOKEN, startTestApp, TestApp } from '../support/app';
import { createEndpoint, deliveries, emit, ENCRYPTION_KEY, evtId, payoutPaid, purchaseCompleted } from './helpers';
import { eventually } from '../support/eventually';
import { startReceiver } from './receiver';

const stripe = new Stripe('sk_test_unused');

describe('webhook delivery', () => {
  let t: TestApp;
  const receivers: { close(): Promise<void> }[] = [];
  const receiver = async (...args: Parameters<typeof startReceiver>) => {
    const r = await startReceiver(...args);
    receivers.push(r);
    return r;
  };
  // A generous timeout: PGlite runs on this thread, and a stalled event loop must not turn a
  // prompt answer into a timeout. The slow-receiver test runs its own app with a short one.
  const env = { WEBHOOK_RETRY_SCHEDULE: '0,1,1', WEBHOOK_TIMEOUT_MS: '5000', WEBHOOK_ENCRYPTION_KEY: ENCRYPTION_KEY };
  beforeAll(async () => {
    t = await startTestApp({ env });
  });
  afterAll(async () => {
    await t.close();
    for (const r of receivers) await r.close();
  });

  const settled = (key: string, endpointId: string, n = 1) =>
    eventually(async () => {
      const log = await deliveries(t, key, endpointId);
      return log.length >= n && log.every((d) => d.status !== 'pending') && log;
    }, 20000, 'deliveries to settle');

  it('signs each delivery so that an independent verifier (stripe-node) accepts it', async () => {
    const r = await receiver();
    const { accountId, key } = await t.accountWithKey({ mode: 'test' });
    const ep = await createEndpoint(t, key, r.url, ['payout.paid']);
    const data = payoutPaid(accountId, 'test');
    const { id } = await emit(t, 'PayoutPaid', data);

    const [entry] = await settled(key, ep.id);
    expect(entry).toMatchObject({ event_id: evtId(id), event_type: 'payout.paid', status: 'succeeded', attempts: 1, response_status: 204, error: null, next_attempt_at: null });
    expect(r.received).toHaveLength(1);
    const [got] = r.received;
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['svc-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const verified = stripe.webhooks.constructEvent(got.body, got.headers['svc-signature'] as string, ep.secret) as any;
    expect(verified).toEqual({ id: evtId(id), type: 'payout.paid', created: expect.any(Number), data: { payout: data.payout } });
    expect(Math.abs(verified.created - Date.now() / 1000)).toBeLessThan(300);
    // A different secret or a changed body does not verify.
    expect(() => stripe.webhooks.constructEvent(got.body, got.headers['svc-signature'] as string, 'whsec_test_wrong')).toThrow();
    expect(() => stripe.webhooks.constructEvent(got.body.replace('1000', '9999'), got.headers['svc-signature'] as string, ep.secret)).toThrow();
    // Operators see it in the metrics.
    const metrics = (await t.request('GET', '/metrics', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text;
    expect(metrics).toMatch(/svc_webhook_delivery_attempts_total\{outcome="succeeded"\} [1-9]/);
    expect(metrics).toMatch(/svc_webhook_delivery_duration_seconds_count [1-9]/);
  });

  it('maps every domain event to its public type and payload, for the owning account only', async () => {
    const r = await receiver();
    const seller = await t.accountWithKey({ mode: 'test' });
    const ep = await createEndpoint(t, seller.key, r.url, ['listing.published', 'listing.unpublished', 'asset.downloaded', 'listing.purchased', 'factory.job.completed', 'factory.job.published', 'payout.paid', 'payout.failed']);
    const listing = { id: 'lst_1', slug: 's', title: 'T' };
    const job = { id: 'job_1', stage: 'review' };
    const base = { account_id: seller.accountId, mode: 'test' };
    await emit(t, 'ListingPublished', { ...base, listing_id: 'lst_1', listing, published_at: 'x' });
    await emit(t, 'ListingUnpublished', { ...base, listing_id: 'lst_1', listing, unpublished_at: 'x' });
    await emit(t, 'AssetDownloaded', { ...base, listing_id: 'lst_1', buyer_account_id: 'acct_buyer', asset: { id: 'lst_1', slug: 's', title: 'T', type: 'dataset' }, downloaded_at: 'x' });
    const sold = purchaseCompleted(seller.accountId, 'acct_buyer', listing, `pur_${seller.accountId}`);
    await emit(t, 'PurchaseCompleted', sold);
    await emit(t, 'GenerationJobCompleted', { job, account_id: seller.accountId, mode: 'test' });
    await emit(t, 'GenerationJobPublished', { job, account_id: seller.accountId, mode: 'test' });
    await emit(t, 'PayoutPaid', payoutPaid(seller.accountId, 'test'));
    const failedPayout = { id: 'po_failed1', object: 'payout', amount_cents: 500, currency: 'usd', status: 'failed', created_at: 'x', arrival_date: null, failure_code: 'account_closed', failure_message: 'closed' };
    await emit(t, 'PayoutFailed', { ...base, payout_id: 'po_failed1', reason: 'closed', failed_at: new Date().toISOString(), payout: failedPayout });
    // The buyer's side of a purchase is not the seller's business, and unknown events are ignored.
    const other = await t.accountWithKey({ mode: 'test' });
    await emit(t, 'PurchaseCompleted', purchaseCompleted(other.accountId, seller.accountId, listing, `pur_${other.accountId}`));
    await emit(t, 'SomethingElse', { account_id: seller.accountId, mode: 'test' });

    await settled(seller.key, ep.id, 8);
    await eventually(() => r.received.length >= 8);
    const byType = Object.fromEntries(r.events().map((e) => [e.type, e.data]));
    expect(byType).toEqual({
      'listing.published': { listing },
      'listing.unpublished': { listing },
      'asset.downloaded': { asset: { id: 'lst_1', slug: 's', title: 'T', type: 'dataset' }, buyer_account_id: 'acct_buyer' },
      'listing.purchased': { purchase: sold.purchase, listing },
      'factory.job.completed': { job },
      'factory.job.published': { job },
      'payout.paid': { payout: expect.objectContaining({ object: 'payout' }) },
      'payout.failed': { payout: failedPayout },
    });
    expect(r.received).toHaveLength(8);
  });

  it('sends an event only to the right account, mode and subscription', async () => {
    const rA = await receiver();
    const rB = await receiver();
    const rOther = await receiver();
    const a = await t.accountWithKey({ mode: 'test' });
    const b = await t.accountWithKey({ mode: 'test' });
    const epA = await createEndpoint(t, a.key, rA.url, ['payout.paid']);
    const epB = await createEndpoint(t, b.key, rB.url, ['payout.paid']);
    const epOther = await createEndpoint(t, a.key, rOther.url, ['listing.published']);

    const live = await t.admin('POST', '/admin/keys', { account: a.accountId, mode: 'live' });
    const liveEp = await createEndpoint(t, live.body.key, 'https://93.184.216.34/hooks', ['payout.paid']);
    // Stand-in for DNS rebinding: the live endpoint's host now resolves to loopback.
    await t.db.query('UPDATE webhook_endpoints SET url = $2 WHERE id = $1', [liveEp.id, `https://localhost:${rA.port}/rebound`]);

    const forA = await emit(t, 'PayoutPaid', payoutPaid(a.accountId, 'test'));
    const forB = await emit(t, 'PayoutPaid', payoutPaid(b.accountId, 'test'));
    const forALive = await emit(t, 'PayoutPaid', payoutPaid(a.accountId, 'live'));

    await settled(a.key, epA.id);
    await settled(b.key, epB.id);
    const [liveEntry] = await eventually(async () => {
      const log = await deliveries(t, live.body.key, liveEp.id);
      return log.length === 1 && log[0].status === 'failed' && log;
    }, 20000, 'the live delivery to fail');
    expect(rA.events().map((e) => e.id)).toEqual([evtId(forA.id)]);
    expect(rB.events().map((e) => e.id)).toEqual([evtId(forB.id)]);
    expect(rOther.received).toHaveLength(0);
    expect(await deliveries(t, a.key, epOther.id)).toEqual([]);
    expect(liveEntry).toMatchObject({ event_id: evtId(forALive.id), attempts: 3, response_status: null });
    expect(liveEntry.error).toMatch(/refused to connect/);
    expect(rA.received.every((r) => r.path === '/hooks')).toBe(true);
  });

  it('retries after a 500 on the schedule and succeeds, with the same event id', async () => {
    const r = await receiver((_req, n) => (n === 1 ? 500 : 200));
    const { accountId, key } = await t.accountWithKey({ mode: 'test' });
    const ep = await createEndpoint(t, key, r.url, ['payout.paid']);
    const { id } = await emit(t, 'PayoutPaid', payoutPaid(accountId, 'test'));
    const [entry] = await settled(key, ep.id);
    expect(entry).toMatchObject({ status: 'succeeded', attempts: 2, response_status: 200, error: null });
    expect(r.events().map((e) => e.id)).toEqual([evtId(id), evtId(id)]);
    const attempts = await t.db.query('SELECT a.attempt, a.response_status FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $1 ORDER BY attempt', [ep.id]);
    expect(attempts.rows).toEqual([{ attempt: 1, response_status: 500 }, { attempt: 2, response_status: 200 }]);
  });

  it('treats a redirect as a failure and does not follow it; fails after the last attempt', async () => {
    const target = await receiver();
    const r = await receiver(() => ({ status: 302, headers: { location: target.url } }));
    const { accountId, key } = await t.accountWithKey({ mode: 'test' });
    const ep = await createEndpoint(t, key, r.url, ['payout.paid']);
    await emit(t, 'PayoutPaid', payoutPaid(accountId, 'test'));
    const [entry] = await settled(key, ep.id);
    expect(entry).toMatchObject({ status: 'failed', attempts: 3, response_status: 302, next_attempt_at: null });
    expect(r.received).toHaveLength(3);
    expect(target.received).toHaveLength(0);
  });

  it('records a receiver that is down', async () => {
    const down = await receiver();
    const downUrl = down.url;
    await down.close();
    const { accountId, key } = await t.accountWithKey({ mode: 'test' });
    const ep = await createEndpoint(t, key, downUrl, ['payout.paid']);
    await emit(t, 'PayoutPaid', payoutPaid(accountId, 'test'));
    const [entry] = await settled(key, ep.id);
    expect(entry).toMatchObject({ status: 'failed', attempts: 3, response_status: null });
    expect(entry.error).toMatch(/ECONNREFUSED/);
  });

  it('gives up on a receiver slower than the timeout and retries it', async () => {
    const quick = await startTestApp({ env: { ...env, WEBHOOK_TIMEOUT_MS: '1000' } });
    try {
      const slow = await receiver(() => 'hang');
      const { accountId, key } = await quick.accountWithKey({ mode: 'test' });
      const ep = await createEndpoint(quick, key, slow.url, ['payout.paid']);
      await emit(quick, 'PayoutPaid', payoutPaid(accountId, 'test'));
      const [entry] = await eventually(async () => {
        const log = await deliveries(quick, key, ep.id);
        return log[0]?.status === 'failed' && log;
      }, 20000, 'the slow delivery to fail');
      expect(entry).toMatchObject({ status: 'failed', attempts: 3, response_status: null });
      expect(entry.error).toMatch(/within 1000 ms/);
      expect(slow.received).toHaveLength(3);
    } finally {
      await quick.close();
    }
  });

  it('caps what it reads of a large response body', async () => {
    const r = await receiver(() => ({ status: 200, body: 'x'.repeat(200_000) }));
    const { accountId, key } = await t.accountWithKey({ mode: 'test' });
    const ep = await createEndpoint(t, key, r.url, ['payout.paid']);
    await emit(t, 'PayoutPaid', payoutPaid(accountId, 'test'));
    const [entry] = await settled(key, ep.id);
    expect(entry).toMatchObject({ status: 'succeeded', response_status: 200 });
    const { rows } = await t.db.query('SELECT length(a.response_body) AS n FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $1', [ep.id]);
    expect(rows[0].n).toBeLessThanOrEqual(1024);
  });

  it('sends nothing to a paused endpoint, holds its queued delivery, and resumes when enabled', async () => {
    const r = await receiver((_req, n) => (n === 1 ? 500 : 204));
    const other = await receiver();
    const { accountId, key } = await t.accountWithKey({ mode: 'test' });
    const ep = await createEndpoint(t, key, r.url, ['payout.paid']);
    const first = await emit(t, 'PayoutPaid', payoutPaid(accountId, 'test'));
    await eventually(() => r.received.length === 1);
    await eventually(async () => (await deliveries(t, key, ep.id))[0]?.response_status === 500);
    await t.request('PATCH', `/v1/webhook_endpoints/${ep.id}`, { key, body: { enabled: false } });

    // A new event while paused creates no delivery at all.
    const handled = new Set<string>();
    t.app.get(WebhookFanOut).events.on('handled', (id: string) => handled.add(id));
    const whilePaused = await emit(t, 'PayoutPaid', payoutPaid(accountId, 'test'));
    await eventually(() => handled.has(whilePaused.id));
    // The queued retry is due; a later delivery elsewhere is claimed after it would have been.
    await eventually(async () => (await t.db.query("SELECT 1 FROM webhook_deliveries WHERE endpoint_id = $1 AND next_attempt_at <= now()", [ep.id])).rows.length === 1);
    const elsewhere = await t.accountWithKey({ mode: 'test' });
    const epElsewhere = await createEndpoint(t, elsewhere.key, other.url, ['payout.paid']);
    await emit(t, 'PayoutPaid', payoutPaid(elsewhere.accountId, 'test'));
    await settled(elsewhere.key, epElsewhere.id);
    expect(r.received).toHaveLength(1);
    const held = await deliveries(t, key, ep.id);
    expect(held).toHaveLength(1);
    expect(held[0]).toMatchObject({ event_id: evtId(first.id), status: 'pending', attempts: 1 });

    await t.request('PATCH', `/v1/webhook_endpoints/${ep.id}`, { key, body: { enabled: true } });
    const [resumed] = await settled(key, ep.id);
    expect(resumed).toMatchObject({ event_id: evtId(first.id), status: 'succeeded', attempts: 2 });
    expect(r.events().map((e) => e.id)).toEqual([evtId(first.id), evtId(first.id)]);
  });

  it('with two instances (two fan-outs, two workers) creates and sends each event once', async () => {
    const second = await startTestApp({ shared: (t as any).database, env });
    try {
      const r = await receiver();
      const { accountId, key } = await t.accountWithKey({ mode: 'test' });
      const ep = await createEndpoint(t, key, r.url, ['payout.paid']);
      const ids: string[] = [];
      for (let i = 0; i < 30; i++) ids.push((await emit(i % 2 ? second : t, 'PayoutPaid', payoutPaid(accountId, 'test', i + 100))).id);
      const log = await settled(key, ep.id, 30);
      expect(log).toHaveLength(30);
      expect(log.filter((d) => d.status !== 'succeeded' || d.attempts !== 1)).toEqual([]);
      await eventually(() => r.received.length >= 30);
      expect(r.events().map((e) => e.id).sort()).toEqual(ids.map(evtId).sort());
    } finally {
      await second.close();
    }
  });

  it('paginates the delivery log, newest first', async () => {
    const r = await receiver();
    const { accountId, key } = await t.accountWithKey({ mode: 'test' });
    const ep = await createEndpoint(t, key, r.url, ['payout.paid']);
    for (let i = 0; i < 3; i++) await emit(t, 'PayoutPaid', payoutPaid(accountId, 'test'));
    const all = await settled(key, ep.id, 3);
    const page1 = await t.request('GET', `/v1/webhook_endpoints/${ep.id}/events?limit=2`, { key });
    expect(page1.body.has_more).toBe(true);
    const page2 = await t.request('GET', `/v1/webhook_endpoints/${ep.id}/events?limit=2&cursor=${page1.body.next_cursor}`, { key });
    expect([...page1.body.items, ...page2.body.items].map((d: any) => d.id)).toEqual(all.map((d) => d.id));
    expect(page2.body.has_more).toBe(false);
  });

  it('queues nothing twice when every projection is rebuilt, and lists no fan-out among the projections', async () => {
    const r = await receiver();
    const { accountId, key } = await t.accountWithKey({ mode: 'test' });
    const ep = await createEndpoint(t, key, r.url, ['payout.paid']);
    await emit(t, 'PayoutPaid', payoutPaid(accountId, 'test'));
    await settled(key, ep.id);

    const rebuilt = await t.admin('POST', '/admin/projections/all/rebuild');
    expect(rebuilt.status).toBe(200);
    expect(rebuilt.body.items.map((p: any) => p.name)).not.toContain(FAN_OUT_GROUP);
    expect((await t.admin('GET', '/admin/projections')).body.items.map((p: any) => p.name)).toContain('webhook_endpoints');
    // A later event is fanned out after the rebuild: the earlier one was not queued again meanwhile.
    const handled = new Set<string>();
    t.app.get(WebhookFanOut).events.on('handled', (id: string) => handled.add(id));
    const later = await emit(t, 'PayoutPaid', payoutPaid(accountId, 'test'));
    await eventually(() => handled.has(later.id));
    expect((await t.request('GET', `/v1/webhook_endpoints/${ep.id}`, { key })).status).toBe(200);
    expect(await settled(key, ep.id, 2)).toHaveLength(2);
    expect(r.received).toHaveLength(2);
  });

  it('closes the pending deliveries of a deleted endpoint', async () => {
    const r = await receiver(() => 500);
    const { accountId, key } = await t.accountWithKey({ mode: 'test' });
    const ep = await createEndpoint(t, key, r.url, ['payout.paid']);
    await emit(t, 'PayoutPaid', payoutPaid(accountId, 'test'));
    await eventually(() => r.received.length >= 1);
    expect((await t.request('DELETE', `/v1/webhook_endpoints/${ep.id}`, { key })).status).toBe(200);
    const row = await eventually(async () => {
      const { rows } = await t.db.query('SELECT status, error FROM webhook_deliveries WHERE endpoint_id = $1', [ep.id]);
      return rows[0]?.status === 'failed' && rows[0];
    });
    expect(row.error).toBe('the endpoint was deleted');
  });
});
