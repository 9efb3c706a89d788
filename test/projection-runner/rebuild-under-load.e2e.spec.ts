import { EVENT_STORE, EventStore } from '../../src/event-store/event-store';
import { ProjectionRunner } from '../../src/projection-runner/projection-runner';
import { LedgerAudit } from '../../src/ledger/ledger-audit';
import { publishModel } from '../catalog/catalog-client';
import { buy } from '../commerce/commerce-client';
import { startTestApp, TestApp } from '../support/app';

/**
 * Issue 9: `svc projections rebuild --all` while buyers keep paying. Every request
 * succeeds, the live read models keep answering during the rebuild, and afterwards the
 * rebuilt models hold exactly what the old ones would have (purchases, the ledger and
 * `ledger verify`).
 */
describe('rebuilding every read model while purchases run', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('fails no request, serves throughout and verifies after', async () => {
    const seller = await t.accountWithKey({ name: 'Rebuild Seller' });
    const models = [];
    for (let i = 0; i < 4; i++) models.push(await publishModel(t, seller.key, { title: `Load ${i}`, price_cents: 1000 + i * 100 }));
    const buyers = [];
    for (let i = 0; i < 12; i++) buyers.push(await t.accountWithKey({ scopes: ['models:read'] }));

    // Some history before the rebuild, so the new builds have a log to replay.
    for (const b of buyers.slice(0, 6)) await buy(t, b.key, models[0].id);

    const failures: string[] = [];
    let bought = 6;
    let loading = true;
    const load = (async () => {
      for (const b of buyers) {
        for (const m of models.slice(1)) {
          if (!loading) return;
          try {
            await buy(t, b.key, m.id);
            bought++;
          } catch (error) {
            failures.push((error as Error).message);
          }
          // Reads go on too, from the live read models.
          const me = await t.request('GET', '/v1/purchases', { key: b.key });
          if (me.status !== 200) failures.push(`GET /v1/purchases ${me.status}`);
        }
      }
    })();

    const before = await t.app.get(ProjectionRunner).status();
    const rebuilt = await t.admin('POST', '/admin/projections/all/rebuild');
    expect(rebuilt.status).toBe(200);
    await load;
    loading = false;
    expect(failures).toEqual([]);
    // The answer comes before the connection would idle out; builds still catching up show as
    // `rebuilding` there, and the operator (like `svc projections rebuild`) watches until they serve.
    let after = rebuilt.body.items as { name: string; build: string; rebuilding: unknown }[];
    for (let waited = 0; after.some((i) => i.rebuilding) && waited < 60_000; waited += 250) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      after = (await t.admin('GET', '/admin/projections')).body.items;
    }
    for (const item of after) {
      expect(item.build).not.toBe(before.items.find((i) => i.name === item.name)!.build);
    }

    const head = await t.app.get<EventStore>(EVENT_STORE).headPosition();
    expect(await t.app.get(ProjectionRunner).waitFor(head, { timeoutMs: 20000 })).toBe(true);
    // Every purchase is in the rebuilt read models, once.
    let listed = 0;
    for (const b of buyers) listed += (await t.request('GET', '/v1/purchases', { key: b.key })).body.items.length;
    expect(listed).toBe(bought);
    const balance = await t.request('GET', '/v1/balance_transactions?limit=200', { key: seller.key });
    expect(balance.body.summary.sale_count).toBe(bought);
    const report = await t.app.get(LedgerAudit).verify({});
    expect(report).toMatchObject({ ok: true, first_difference: null });
  });
});
