import Ajv2020 from 'ajv/dist/2020';
import { publishModel } from '../catalog/catalog-client';
import { buy } from '../commerce/commerce-client';
import { startTestApp, TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { createEndpoint, emit, ENCRYPTION_KEY, evtId, payoutPaid } from './helpers';
import { startReceiver } from './receiver';

describe('Events API: GET /v1/events and /v1/events/{id} (issue 24)', () => {
  let t: TestApp;
  const receivers: { close(): Promise<void> }[] = [];
  beforeAll(async () => {
    t = await startTestApp({ env: { WEBHOOK_RETRY_SCHEDULE: '0,1,1', WEBHOOK_TIMEOUT_MS: '5000', WEBHOOK_ENCRYPTION_KEY: ENCRYPTION_KEY } });
  });
  afterAll(async () => {
    await t.close();
    for (const r of receivers) await r.close();
  });

  const list = async (key: string, query = '') => {
    const res = await t.request('GET', `/v1/events${query}`, { key });
    if (res.status !== 200) throw new Error(`GET /v1/events${query}: ${res.status} ${res.text}`);
    return res.body as { items: any[]; next_cursor: string | null; has_more: boolean };
  };
  const typesOf = (items: any[]) => items.map((e) => e.type);
  const expectNotFound = (res: { status: number; body: any }) => {
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { code: 'not_found', message: 'No such event.', request_id: expect.any(String) } });
  };
  const expectRefused = (res: { status: number; body: any }, field: string) => {
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.message).toContain(`"${field}"`);
  };

  it('shows a publish and a purchase at once, newest first, each as the webhook delivered it', async () => {
    const seller = await t.accountWithKey();
    const buyer = await t.accountWithKey({ scopes: ['models:read'] });
    const receiver = await startReceiver();
    receivers.push(receiver);
    await createEndpoint(t, seller.key, receiver.url, ['listing.published', 'listing.purchased']);

    const model = await publishModel(t, seller.key, { title: 'Events Grasp', price_cents: 2500 }, 'events-weights');
    const afterPublish = await list(seller.key);
    expect(afterPublish).toEqual({
      items: [{ id: expect.stringMatching(/^evt_[0-9a-f]{32}$/), object: 'event', type: 'listing.published', created: expect.any(Number), data: { listing: expect.objectContaining({ id: model.id }) } }],
      next_cursor: null,
      has_more: false,
    });
    expect(Math.abs(afterPublish.items[0].created - Date.now() / 1000)).toBeLessThan(300);

    await buy(t, buyer.key, model.slug);
    const { items } = await list(seller.key);
    expect(typesOf(items)).toEqual(['listing.purchased', 'listing.published']);
    expect(items[0].data).toEqual({ purchase: expect.objectContaining({ object: 'purchase', amount_cents: 2500 }), listing: expect.objectContaining({ id: model.id }) });
    // The buyer's side of a purchase is not the seller's event, and the buyer's key may not read events.
    expect((await t.request('GET', '/v1/events', { key: buyer.key })).status).toBe(403);

    await eventually(() => receiver.received.length >= 2, 20000, 'both deliveries');
    for (const delivered of receiver.received) {
      const id = JSON.parse(delivered.body).id;
      const res = await t.request('GET', `/v1/events/${id}`, { key: seller.key });
      expect(res.status).toBe(200);
      const { object, ...envelope } = res.body;
      expect(object).toBe('event');
      expect(JSON.stringify(envelope)).toBe(delivered.body);
      expect(items.find((e) => e.id === id)).toEqual(res.body);
    }
  });

  it('answers 404 for another account’s event, the other mode’s, and any id naming nothing', async () => {
    const seller = await t.accountWithKey();
    const other = await t.accountWithKey();
    const live = await t.admin('POST', '/admin/keys', { account: seller.accountId, mode: 'live' });
    await publishModel(t, seller.key, { title: 'Mode Fenced' }, 'fenced-weights');
    const [testEvent] = (await list(seller.key)).items;
    const liveEmitted = await emit(t, 'PayoutPaid', payoutPaid(seller.accountId, 'live'));
    const liveId = evtId(liveEmitted.id);
    await eventually(async () => (await list(live.body.key)).items.length === 1, 15000, 'the live event');

    expect((await t.request('GET', `/v1/events/${testEvent.id}`, { key: seller.key })).status).toBe(200);
    expect((await t.request('GET', `/v1/events/${liveId}`, { key: live.body.key })).status).toBe(200);
    expectNotFound(await t.request('GET', `/v1/events/${testEvent.id}`, { key: other.key }));
    expectNotFound(await t.request('GET', `/v1/events/${testEvent.id}`, { key: live.body.key }));
    expectNotFound(await t.request('GET', `/v1/events/${liveId}`, { key: seller.key }));
    expect(typesOf((await list(live.body.key)).items)).toEqual(['payout.paid']);
    expect((await list(other.key)).items).toEqual([]);
    for (const id of ['evt_00000000000000000000000000000000', 'nope', 'evt_', '..%2F..', 'x'.repeat(100), liveEmitted.id]) {
      expectNotFound(await t.request('GET', `/v1/events/${id}`, { key: seller.key }));
    }
    // Nor may another account page from one of its events.
    expectRefused(await t.request('GET', `/v1/events?cursor=${testEvent.id}`, { key: other.key }), 'cursor');
  });

  it('filters by type and pages with the cursor, the pages adding up to the whole list', async () => {
    const seller = await t.accountWithKey();
    const models = [];
    for (const n of [1, 2, 3]) models.push(await publishModel(t, seller.key, { title: `Paged ${n}` }, `paged-${n}`));
    for (const model of models.slice(0, 2)) expect((await t.request('DELETE', `/v1/models/${model.id}`, { key: seller.key })).status).toBe(200);

    const all = (await list(seller.key)).items;
    expect(typesOf(all)).toEqual(['listing.unpublished', 'listing.unpublished', 'listing.published', 'listing.published', 'listing.published']);
    expect(all.map((e) => e.data.listing.title)).toEqual(['Paged 2', 'Paged 1', 'Paged 3', 'Paged 2', 'Paged 1']);

    const pages = [];
    for (let cursor = ''; ; ) {
      const page = await list(seller.key, `?limit=2${cursor && `&cursor=${cursor}`}`);
      pages.push(page);
      if (!page.has_more) break;
      expect(page.next_cursor).toBe(page.items[page.items.length - 1].id);
      cursor = page.next_cursor!;
    }
    expect(pages.map((p) => [p.items.length, p.has_more])).toEqual([[2, true], [2, true], [1, false]]);
    expect(pages[2].next_cursor).toBeNull();
    expect(pages.flatMap((p) => p.items)).toEqual(all);

    const published = await list(seller.key, '?type=listing.published&limit=2');
    expect(published.items).toEqual(all.slice(2, 4));
    const rest = await list(seller.key, `?type=listing.published&limit=2&cursor=${published.next_cursor}`);
    expect(rest).toEqual({ items: [all[4]], next_cursor: null, has_more: false });
    expect((await list(seller.key, '?type=listing.unpublished,%20listing.published')).items).toEqual(all);
    expect((await list(seller.key, '?type=payout.paid')).items).toEqual([]);
    expect((await list(seller.key, '?limit=1000')).items).toEqual(all);

    // A rebuild of the read model from the log serves the same events.
    expect((await t.admin('POST', '/admin/projections/public_events/rebuild')).status).toBe(200);
    expect((await list(seller.key)).items).toEqual(all);
  });

  it('filters by created, in unix seconds or ISO 8601: gte inclusive, lt exclusive', async () => {
    const seller = await t.accountWithKey();
    await publishModel(t, seller.key, { title: 'Early' }, 'early');
    // The next events fall in a later second, so a boundary in whole seconds separates them.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await publishModel(t, seller.key, { title: 'Late 1' }, 'late-1');
    await publishModel(t, seller.key, { title: 'Late 2' }, 'late-2');
    const all = (await list(seller.key)).items;
    const boundary = all[1].created;
    expect(all[2].created).toBeLessThan(boundary);
    const titles = (items: any[]) => items.map((e) => e.data.listing.title);

    expect(titles((await list(seller.key, `?created[gte]=${boundary}`)).items)).toEqual(['Late 2', 'Late 1']);
    expect(titles((await list(seller.key, `?created[lt]=${boundary}`)).items)).toEqual(['Early']);
    const iso = new Date(boundary * 1000).toISOString();
    expect(titles((await list(seller.key, `?created%5Bgte%5D=${iso}`)).items)).toEqual(['Late 2', 'Late 1']);
    expect(titles((await list(seller.key, `?created[lt]=${iso}`)).items)).toEqual(['Early']);
    expect((await list(seller.key, `?created[gte]=${boundary}&created[lt]=${boundary}`)).items).toEqual([]);
    const page = await list(seller.key, `?created[gte]=${all[2].created}&limit=1`);
    expect(titles(page.items)).toEqual(['Late 2']);
    expect(titles((await list(seller.key, `?created[gte]=${all[2].created}&limit=5&cursor=${page.next_cursor}`)).items)).toEqual(['Late 1', 'Early']);
  });

  it('is in the OpenAPI document with its scope, and real answers match the documented schemas', async () => {
    const doc = (await t.request('GET', '/v1/openapi.json')).body;
    for (const path of ['/v1/events', '/v1/events/{id}']) expect(doc.paths[path].get['x-required-scopes']).toEqual(['webhooks:write']);
    const ajv = new Ajv2020({ strict: false });
    ajv.addSchema({ ...doc, $id: 'https://svc.test/openapi.json' });
    const schemaOf = (path: string) => ajv.getSchema(`https://svc.test/openapi.json#/paths/${path.replace(/\//g, '~1')}/get/responses/200/content/application~1json/schema`)!;
    const seller = await t.accountWithKey();
    await publishModel(t, seller.key, { title: 'Documented' }, 'documented');
    const page = await list(seller.key);
    expect(schemaOf('/v1/events')(page)).toBe(true);
    expect(schemaOf('/v1/events/{id}')((await t.request('GET', `/v1/events/${page.items[0].id}`, { key: seller.key })).body)).toBe(true);
    expect(schemaOf('/v1/events/{id}')({ ...page.items[0], object: 'webhook_endpoint' })).toBe(false);
  });

  it('refuses bad filters with 400 validation_failed naming the field', async () => {
    const { key } = await t.accountWithKey();
    const bad = async (query: string) => t.request('GET', `/v1/events?${query}`, { key });
    const unknownType = await bad('type=listing.bogus');
    expectRefused(unknownType, 'type');
    expect(unknownType.body.error.message).toContain('"listing.bogus" is not an event type');
    expect(unknownType.body.error.message).toContain('listing.purchased');
    expectRefused(await bad('type=listing.published,'), 'type');
    expectRefused(await bad('type=listing.published&type=payout.paid'), 'type');
    for (const value of ['yesterday', '-5', '1.5', '2026-02-30', '']) {
      const res = await bad(`created[gte]=${value}`);
      expectRefused(res, 'created[gte]');
      expect(res.body.error.message).toMatch(/unix seconds .* ISO 8601/);
    }
    expectRefused(await bad('created[lt]=soon'), 'created[lt]');
    expectRefused(await bad('limit=ten'), 'limit');
    expectRefused(await bad('cursor=not-a-cursor'), 'cursor');
    expectRefused(await bad('cursor=evt_00000000000000000000000000000000'), 'cursor');
  });
});
