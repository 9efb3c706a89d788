import { randomUUID } from 'node:crypto';
import { EVENT_STORE, EventStore } from '../../src/event-store/event-store';
import { ProjectionRunner } from '../../src/projection-runner/projection-runner';
import { inferencePricesProjection } from '../../projections/inference-prices.projection';
import { startTestApp, TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { stallProjections } from '../support/stalled-projections';

/**
 * The readiness bound of these tests (READY_MAX_LAG_SECONDS): short, so that being behind by
 * it takes little waiting, and over a second, as EventStoreDB's timestamps (whole seconds)
 * make an event up to a second older than it is.
 */
const MAX_LAG_SECONDS = 2;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('health and readiness probes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { READY_MAX_LAG_SECONDS: String(MAX_LAG_SECONDS) } });
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

  it('answers 503 not_ready naming the read models that left an event unread longer than the bound, and 200 once they caught up', async () => {
    const stalled = await stallProjections(t);
    const price = { model: 'svc-fast-8b', input_usd_per_million: 0.1, output_usd_per_million: 0.3, set_at: new Date().toISOString() };
    await t.app.get<EventStore>(EVENT_STORE).append('inferenceprice-svc-fast-8b', [{ type: 'InferencePriceSet', data: price }], 'any');
    // Behind, but not for longer than the bound yet.
    expect((await t.request('GET', '/readyz')).status).toBe(200);
    await pause(MAX_LAG_SECONDS * 1000 + 100);
    const behind = await t.request('GET', '/readyz');
    expect(behind.status).toBe(503);
    // Every read model has to read the event (whether it has anything to do with it or not), and none is running.
    expect(behind.body.error).toMatchObject({ code: 'not_ready', message: expect.stringMatching(/projections: .*inference_prices is \d+ s behind/) });
    expect(behind.body.error.message).toMatch(/accounts is \d+ s behind/);
    expect(behind.body.error.checks.info).toMatchObject({ database: { status: 'up' }, event_store: { status: 'up' } });
    // Liveness does not depend on it.
    expect((await t.request('GET', '/healthz')).status).toBe(200);

    await stalled.resume();
    expect((await t.request('GET', '/readyz')).status).toBe(200);
  });

  it('stays ready while running read models read past events they have nothing to do with', async () => {
    const runner = t.app.get(ProjectionRunner);
    const store = t.app.get<EventStore>(EVENT_STORE);
    // A service stream category (EventStoreDB reads only those), a type no read model handles.
    const { position } = await store.append(`account-${randomUUID()}`, [{ type: 'ReadinessNoise', data: {} }], 'no_stream');
    expect(await runner.waitFor(position, { timeoutMs: 10_000 })).toBe(true);
    await pause(MAX_LAG_SECONDS * 1000 + 100);
    expect((await t.request('GET', '/readyz')).status).toBe(200);
    for (const item of (await runner.status()).items) expect(item).toMatchObject({ behind: false, lag_seconds: 0 });
  });

  it('is not ready while a new version of a read model is far behind, and ready once it serves (a rolling deploy)', async () => {
    const runner = t.app.get(ProjectionRunner);
    const price = { model: 'svc-reason-70b', input_usd_per_million: 2, output_usd_per_million: 6, set_at: new Date().toISOString() };
    const { position } = await t.app.get<EventStore>(EVENT_STORE).append('inferenceprice-svc-reason-70b', [{ type: 'InferencePriceSet', data: price }], 'any');
    expect(await runner.waitFor(position, { timeoutMs: 20_000 })).toBe(true);
    expect((await t.request('GET', '/readyz')).status).toBe(200);

    // This code now builds version N+1, beside the live version N, which stays current.
    const stalled = await stallProjections(t);
    const projection = inferencePricesProjection as { version: number };
    const live = projection.version;
    projection.version = live + 1;
    try {
      await runner.prepare();
      // The new build reads from the start of the log, whose first events are older than the bound by now.
      await pause(MAX_LAG_SECONDS * 1000 + 100);
      const res = await t.request('GET', '/readyz');
      expect(res.status).toBe(503);
      expect(res.body.error.message).toMatch(new RegExp(`inference_prices serves version ${live}; version ${live + 1} is \\d+ s behind`));
      // The live build is current: it is the new version's lag that keeps this instance out.
      expect(res.body.error.message).not.toMatch(/inference_prices is \d+ s behind/);

      await stalled.resume();
      await eventually(async () => (await t.request('GET', '/readyz')).status === 200, 20_000, 'the new version to serve');
      // Ready as soon as the new build is within the bound; it goes live when it has caught up.
      const serving = await eventually(async () => {
        const item = (await runner.status()).items.find((p) => p.name === 'inference_prices');
        return item?.version === live + 1 && item;
      }, 20_000, 'the new version to go live');
      expect(serving).toMatchObject({ version: live + 1, behind: false, lag_seconds: 0 });
    } finally {
      projection.version = live;
    }
  });
});

