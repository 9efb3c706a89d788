import { EVENT_STORE, EventStore } from '../../src/event-store/event-store';
import { ListingStore } from '../../src/catalog/listing-store';
import { Streams } from '../../src/platform/streams';
import { startTestApp, TestApp } from '../support/app';
import { stallProjections } from '../support/stalled-projections';
import { modelBody, modelBytes, upload } from './catalog-client';

/**
 * Issue 9: listing commands find the listing on its slug claim and its stream, never in
 * catalog_listings, so a listing drafted a moment ago can be edited and published while
 * the projection is behind.
 */
describe('listing commands decide on streams, not on lagging read models', () => {
  let t: TestApp;
  let seller: { accountId: string; key: string };
  let other: { accountId: string; key: string };
  beforeAll(async () => {
    t = await startTestApp();
    seller = await t.accountWithKey();
    other = await t.accountWithKey();
  });
  afterAll(() => t.close());

  it('updates, publishes and unpublishes a listing drafted a moment ago, while no projection runs', async () => {
    const grant = await upload(t, seller.key, 'arm.onnx', modelBytes('arm-bytes'));
    const stalled = await stallProjections(t);
    const draft = await t.request('POST', '/v1/listings', { key: seller.key, body: modelBody(grant, { title: 'Lagging Arm', price_cents: 1500 }) });
    expect([draft.status, draft.body.slug, draft.body.status]).toEqual([201, 'lagging-arm', 'draft']);
    // The read model has not seen the draft: only the streams know it.
    expect((await t.request('GET', `/v1/listings/${draft.body.id}`, { key: seller.key })).status).toBe(404);

    const updated = await t.request('PATCH', '/v1/listings/lagging-arm', { key: seller.key, body: { price_cents: 2500, version: '1.1.0' } });
    expect([updated.status, updated.body.price, updated.body.version]).toEqual([200, { amount: 2500, currency: 'usd' }, '1.1.0']);
    const published = await t.request('POST', `/v1/listings/${draft.body.id}/publish`, { key: seller.key });
    expect([published.status, published.body.status, published.body.price.amount]).toEqual([200, 'published', 2500]);
    const unpublished = await t.request('DELETE', '/v1/models/lagging-arm', { key: seller.key });
    expect([unpublished.status, unpublished.body.status]).toEqual([200, 'unpublished']);
    const republished = await t.request('POST', '/v1/listings/lagging-arm/publish', { key: seller.key });
    expect([republished.status, republished.body.status]).toEqual([200, 'published']);

    // Another account's listing is absent to the caller (404, never 403), by id and by slug.
    for (const ref of [draft.body.id, 'lagging-arm']) {
      for (const [method, path] of [['PATCH', `/v1/listings/${ref}`], ['POST', `/v1/listings/${ref}/publish`], ['POST', `/v1/listings/${ref}/unpublish`]]) {
        const res = await t.request(method, path, { key: other.key, body: method === 'PATCH' ? { version: '9.9.9' } : undefined });
        expect([method, path, res.status, res.body.error?.code]).toEqual([method, path, 404, 'not_found']);
      }
    }
    // The kind is part of the name: a model is not a dataset.
    expect((await t.request('PATCH', '/v1/datasets/lagging-arm', { key: seller.key, body: { version: '2.0.0' } })).status).toBe(404);

    // Once the projection runs, the reader's view is what the last command answered.
    await stalled.resume();
    const read = await t.request('GET', '/v1/listings/lagging-arm', { key: seller.key });
    expect(read.body).toEqual(republished.body);
    expect((await t.request('GET', '/v1/models/lagging-arm', { key: other.key })).status).toBe(200);
  });

  it('a slug claimed by a draft that never happened names no listing', async () => {
    // What a draft that failed between its slug claim and ListingDrafted leaves.
    const store = t.app.get<EventStore>(EVENT_STORE);
    const claim = { slug: 'ghost-arm', listing_id: 'lst_ghost', mode: 'test' };
    await store.append(Streams.listingSlug('test', 'ghost-arm'), [{ type: 'ListingSlugClaimed', data: claim }], 'no_stream');
    for (const [method, path] of [['PATCH', '/v1/listings/ghost-arm'], ['POST', '/v1/listings/ghost-arm/publish'], ['POST', '/v1/listings/lst_ghost/publish']]) {
      const res = await t.request(method, path, { key: seller.key, body: method === 'PATCH' ? { version: '1.0.1' } : undefined });
      expect([path, res.status, res.body.error?.code]).toEqual([path, 404, 'not_found']);
    }
    const listings = t.app.get(ListingStore);
    expect(await listings.find('test', 'ghost-arm')).toBeUndefined();
    expect(await listings.findPublished('test', 'ghost-arm')).toBeUndefined();
  });

  it('resolves a listing in any state, and as published only once published (the resolvers commerce calls)', async () => {
    const grant = await upload(t, seller.key, 'eye.onnx', modelBytes('eye-bytes'));
    const draft = await t.request('POST', '/v1/listings', { key: seller.key, body: modelBody(grant, { title: 'Eye Net' }) });
    const listings = t.app.get(ListingStore);
    expect((await listings.find('test', 'eye-net', 'model'))?.state.id).toBe(draft.body.id);
    expect(await listings.findPublished('test', draft.body.id)).toBeUndefined();
    expect(await listings.find('live', draft.body.id)).toBeUndefined();
    await t.request('POST', '/v1/listings/eye-net/publish', { key: seller.key });
    expect((await listings.findPublished('test', 'eye-net', 'model'))?.state.status).toBe('published');
    expect(await listings.findPublished('test', 'eye-net', 'dataset')).toBeUndefined();
    expect((await listings.findPublished('test', draft.body.id))?.revision).toBe(1);
  });
});
