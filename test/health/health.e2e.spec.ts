import { EVENT_STORE, EventStore } from '../../src/event-store/event-store';
import { READY_MAX_LAG } from '../../src/health/readiness';
import { ProjectionRunner } from '../../src/projection-runner/projection-runner';
import { inferencePricesProjection } from '../../projections/inference-prices.projection';
import { startTestApp, TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { stallProjections } from '../support/stalled-projections';

describe('health and readiness probes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('GET /healthz answers 200 without credentials', async () => {
    const res = await t.request('GET', '/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok' });
    expect(res.headers['x-request-id']).toBeDefined();
  });

  it('GET /readyz answers 200 when the database, the event store and every read model are there', async () => {
    const res = await t.request('GET', '/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', info: { database: { status: 'up' }, event_store: { status: 'up' }, projections: { status: 'up' } } });
  });

  it('answers 503 not_ready naming the read models while they are far behind the log, and 200 once they caught up', async () => {
    const stalled = await stallProjections(t);
    // Events a read model handles (the price in force, set again and again): it must apply them to be current.
    const price = { model: 'svc-fast-8b', input_usd_per_million: 0.1, output_usd_per_million: 0.3, set_at: new Date().toISOString() };
    const burst = Array.from({ length: READY_MAX_LAG + 1 }, () => ({ type: 'InferencePriceSet', data: price }));
    await t.app.get<EventStore>(EVENT_STORE).append('inferenceprice-svc-fast-8b', burst, 'any');
    const behind = await t.request('GET', '/readyz');
    expect(behind.status).toBe(503);
    expect(behind.body.error).toMatchObject({ code: 'not_ready', message: expect.stringContaining(`projections: inference_prices is ${READY_MAX_LAG + 1} events behind`) });
    expect(behind.body.error.checks.info).toMatchObject({ database: { status: 'up' }, event_store: { status: 'up' } });
    // Events no read model handles do not count as lag.
    await t.app.get<EventStore>(EVENT_STORE).append('readiness-noise-1', burst.map(() => ({ type: 'ReadinessNoise', data: {} })), 'no_stream');
    expect((await t.request('GET', '/readyz')).body.error.message).not.toMatch(/accounts is/);
    // Liveness does not depend on it.
    expect((await t.request('GET', '/healthz')).status).toBe(200);

    await stalled.resume();
    expect((await t.request('GET', '/readyz')).status).toBe(200);
  });

  it('is not ready while a new version of a read model is far behind, and ready once it serves (a rolling deploy)', async () => {
    const runner = t.app.get(ProjectionRunner);
    const price = { model: 'svc-reason-70b', input_usd_per_million: 2, output_usd_per_million: 6, set_at: new Date().toISOString() };
    const burst = Array.from({ length: READY_MAX_LAG + 1 }, () => ({ type: 'InferencePriceSet', data: price }));
    const { position } = await t.app.get<EventStore>(EVENT_STORE).append('inferenceprice-svc-reason-70b', burst, 'any');
    expect(await runner.waitFor(position, { timeoutMs: 20_000 })).toBe(true);
    expect((await t.request('GET', '/readyz')).status).toBe(200);

    // This code now builds version N+1, beside the live version N, which stays current.
    const stalled = await stallProjections(t);
    const projection = inferencePricesProjection as { version: number };
    const live = projection.version;
    projection.version = live + 1;
    try {
      await runner.prepare();
      const res = await t.request('GET', '/readyz');
      expect(res.status).toBe(503);
      expect(res.body.error.message).toMatch(new RegExp(`inference_prices serves version ${live}; version ${live + 1} is \\d+ events behind`));

      await stalled.resume();
      await eventually(async () => (await t.request('GET', '/readyz')).status === 200, 20_000, 'the new version to serve');
      expect((await runner.status()).items.find((p) => p.name === 'inference_prices')).toMatchObject({ version: live + 1, lag: 0 });
    } finally {
      projection.version = live;
    }
  });
});

