import { randomUUID } from 'node:crypto';
import { EVENT_STORE, EventStore } from '../../src/event-store/event-store';
import { ProjectionRunner } from '../../src/projection-runner/projection-runner';
import { publishModel } from '../catalog/catalog-client';
import { buy, eventsOfType } from '../commerce/commerce-client';
import { ADMIN_TOKEN, startTestApp, TestApp } from '../support/app';
import { stallProjections } from '../support/stalled-projections';

describe('GET /metrics (Prometheus)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const scrape = async () => {
    const res = await t.request('GET', '/metrics', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return res.text;
  };

  it('needs the admin token: an API key or nothing is refused', async () => {
    const { key } = await t.accountWithKey();
    expect((await t.request('GET', '/metrics')).status).toBe(401);
    expect((await t.request('GET', '/metrics', { key })).status).toBe(401);
  });

  it('times requests by route template and status, never by raw URL', async () => {
    const { key } = await t.accountWithKey();
    await t.request('GET', '/v1/me', { key });
    await t.request('GET', '/v1/models/no-such-model', { key });
    const text = await scrape();
    expect(text).toMatch(/svc_http_request_duration_seconds_count\{method="GET",route="\/v1\/me",status="200"\} [1-9]/);
    expect(text).toMatch(/svc_http_request_duration_seconds_count\{method="GET",route="\/v1\/models\/:idOrSlug",status="404"\} 1/);
    expect(text).not.toContain('no-such-model');
  });

  it('reports read model lag and parked events, purchases, inference calls and tokens, and Node\'s own metrics', async () => {
    const { key } = await t.accountWithKey({ tier: 'premium' });
    const call = await t.request('POST', '/v1/chat/completions', { key, body: { model: 'svc-fast-8b', messages: [{ role: 'user', content: 'hi' }] } });
    expect(call.status).toBe(200);
    expect(await t.app.get(ProjectionRunner).waitFor(await t.app.get<EventStore>(EVENT_STORE).headPosition(), { timeoutMs: 10_000 })).toBe(true);
    const text = await scrape();
    // Caught up: no event left unread, so no age at all.
    expect(text).toMatch(/^svc_projection_lag_seconds\{projection="accounts"\} 0$/m);
    expect(text).toMatch(/svc_projection_parked_events\{projection="catalog_listings"\} 0/);
    expect(text).toContain('# TYPE svc_purchases gauge');
    expect(text).toContain('svc_inference_calls_total{mode="test",model="svc-fast-8b",finish="stop"} 1');
    expect(text).toContain(`svc_inference_tokens_total{mode="test",model="svc-fast-8b",kind="completion"} ${call.body.usage.completion_tokens}`);
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toContain('nodejs_eventloop_lag_seconds');
  });

  it('counts appended events by type, checkouts by outcome and refunds, and each read model\'s position', async () => {
    const seller = await t.accountWithKey({ name: 'Metered Seller' });
    const buyer = await t.accountWithKey({ name: 'Metered Buyer', scopes: ['models:read'] });
    const before = await scrape();
    const value = (text: string, series: string) => Number(new RegExp(`^${series.replace(/[{}"()]/g, (c) => `\\${c}`)} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);

    const model = await publishModel(t, seller.key, { title: 'Metered Model', price_cents: 1200 });
    await buy(t, buyer.key, model.id);
    const [completed] = (await eventsOfType(t, 'PurchaseCompleted')).filter((e) => e.data.purchase.asset.id === model.id);
    expect((await t.admin('POST', `/admin/purchases/${completed.data.purchase_id}/refund`)).status).toBe(200);

    const after = await scrape();
    const delta = (series: string) => value(after, series) - value(before, series);
    expect(delta('svc_checkouts_total{outcome="opened"}')).toBe(1);
    expect(delta('svc_checkouts_total{outcome="completed"}')).toBe(1);
    expect(delta('svc_refunds_total')).toBe(1);
    expect(delta('svc_events_appended_total{type="PurchaseCompleted"}')).toBe(1);
    expect(delta('svc_events_appended_total{type="SaleRecorded"}')).toBe(1);
    expect(value(after, 'svc_projection_position{projection="purchases"}')).toBeGreaterThan(value(before, 'svc_projection_position{projection="purchases"}'));
  });

  it('reports the age of the oldest event a stopped read model has not read', async () => {
    const stalled = await stallProjections(t);
    try {
      // An event of a service stream category (EventStoreDB reads only those) that no read model handles: every one of them still has to read past it.
      await t.app.get<EventStore>(EVENT_STORE).append(`account-${randomUUID()}`, [{ type: 'MetricsLagProbe', data: {} }], 'no_stream');
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const lag = Number(/^svc_projection_lag_seconds\{projection="accounts"\} (\S+)$/m.exec(await scrape())?.[1]);
      expect(lag).toBeGreaterThanOrEqual(1.1);
      expect(lag).toBeLessThan(60);
    } finally {
      await stalled.resume();
    }
  });
});
