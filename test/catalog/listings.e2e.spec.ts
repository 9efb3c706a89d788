import { startTestApp, TestApp } from '../support/app';
import { eventsOf, modelBody, modelBytes, upload } from './catalog-client';

describe('listings: the seller view', () => {
  let t: TestApp;
  let seller: { accountId: string; key: string };

  beforeAll(async () => {
    t = await startTestApp();
    seller = await t.accountWithKey();
  });
  afterAll(() => t.close());

  it('drafts, publishes and unpublishes idempotently, firing each event once', async () => {
    const grant = await upload(t, seller.key, 'nav.onnx', modelBytes('nav-bytes'));
    const draft = await t.request('POST', '/v1/listings', { key: seller.key, body: modelBody(grant, { title: 'Nav Stack', price_cents: 1500 }) });
    expect(draft.status).toBe(201);
    expect(draft.body).toMatchObject({ object: 'listing', kind: 'model', status: 'draft', validation_status: 'pending', slug: 'nav-stack', published_at: null });
    const reader = await t.accountWithKey();
    expect((await t.request('GET', `/v1/models/${draft.body.id}`, { key: seller.key })).status).toBe(404);

    const drafts = await t.request('GET', '/v1/listings?status=draft', { key: seller.key });
    expect(drafts.body.items.map((l: any) => l.id)).toEqual([draft.body.id]);

    for (let i = 0; i < 2; i++) {
      const res = await t.request('POST', `/v1/listings/${draft.body.slug}/publish`, { key: seller.key });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'published', validation_status: 'passed' });
    }
    expect((await t.request('GET', `/v1/models/nav-stack`, { key: reader.key })).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const res = await t.request('POST', `/v1/listings/${draft.body.id}/unpublish`, { key: seller.key });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('unpublished');
    }
    const mine = (type: string) => eventsOf(t, type, seller.accountId).then((rows) => rows.filter((e) => e.data.listing_id === draft.body.id));
    expect(await mine('ListingPublished')).toHaveLength(1);
    expect(await mine('ListingUnpublished')).toHaveLength(1);
    expect((await t.request('GET', '/v1/listings?status=unpublished', { key: seller.key })).body.items).toHaveLength(1);
  });

  it('refuses to publish a draft whose file never landed, and leaves it a draft', async () => {
    const draft = await t.request('POST', '/v1/listings', {
      key: seller.key,
      body: { title: 'Phantom', type: 'onnx-model', storage_path: `user/${seller.accountId}/1-phantom.onnx`, file_name: 'phantom.onnx', file_size: 5 },
    });
    const res = await t.request('POST', `/v1/listings/${draft.body.id}/publish`, { key: seller.key });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('file_not_found');
    expect((await t.request('GET', `/v1/listings/${draft.body.id}`, { key: seller.key })).body.status).toBe('draft');
    expect((await eventsOf(t, 'ListingPublished', seller.accountId)).filter((e) => e.data.listing_id === draft.body.id)).toEqual([]);
  });

  it('shows why a publish failed (validation_status failed, validation_errors) until a publish passes, and records the same failure once', async () => {
    const late = modelBytes('late');
    const minted = await t.request('POST', '/v1/uploads', { key: seller.key, body: { file_name: 'late.onnx', file_size: late.length } });
    const draft = await t.request('POST', '/v1/listings', { key: seller.key, body: modelBody(minted.body, { title: 'Late Upload' }) });
    expect(draft.body).toMatchObject({ validation_status: 'pending', validation_errors: [] });
    const listing = async () => (await t.request('GET', `/v1/listings/${draft.body.id}`, { key: seller.key })).body;

    for (let i = 0; i < 2; i++) {
      const refused = await t.request('POST', `/v1/listings/${draft.body.id}/publish`, { key: seller.key });
      expect([refused.status, refused.body.error.code]).toEqual([400, 'file_not_found']);
    }
    const failed = await listing();
    expect(failed).toMatchObject({ status: 'draft', validation_status: 'failed', validation_errors: [{ code: 'file_not_found', message: expect.stringContaining('PUT the bytes') }] });
    expect((await t.request('GET', '/v1/listings?status=draft', { key: seller.key })).body.items.find((l: any) => l.id === draft.body.id).validation_status).toBe('failed');
    const failures = (await eventsOf(t, 'ListingValidationFailed', seller.accountId)).filter((e) => e.data.listing_id === draft.body.id);
    expect(failures).toHaveLength(1);

    // The bytes land; the next publish passes and clears the errors.
    expect((await t.storage('PUT', minted.body.upload_url, { payload: late, headers: { 'content-type': 'application/octet-stream' } })).status).toBe(200);
    const published = await t.request('POST', `/v1/listings/${draft.body.id}/publish`, { key: seller.key });
    expect(published.body).toMatchObject({ status: 'published', validation_status: 'passed', validation_errors: [] });
    expect(await listing()).toMatchObject({ validation_status: 'passed', validation_errors: [] });
  });

  it('refuses a draft pointing outside the seller prefix, or priced 1-99, and drafts nothing', async () => {
    const other = await t.accountWithKey();
    const before = (await t.request('GET', '/v1/listings', { key: other.key })).body.items;
    const outside = await t.request('POST', '/v1/listings', {
      key: other.key,
      body: { title: 'Stolen', storage_path: `user/${seller.accountId}/1-nav.onnx`, file_name: 'nav.onnx', file_size: 9 },
    });
    expect(outside.status).toBe(400);
    expect(outside.body.error.code).toBe('invalid_storage_path');
    const cheap = await t.request('POST', '/v1/listings', { key: other.key, body: { title: 'Cheap', price_cents: 99 } });
    expect(cheap.body.error.code).toBe('price_too_low');
    expect((await t.request('GET', '/v1/listings', { key: other.key })).body.items).toEqual(before);
  });

  it.each([1e308, 2 ** 53 + 1, 2 ** 63, 1.5, 6 * 1024 ** 4])('refuses a file_size of %p on a draft with 400 naming it, and drafts nothing', async (size) => {
    const other = await t.accountWithKey();
    const res = await t.request('POST', '/v1/listings', {
      key: other.key,
      body: { title: 'Huge', storage_path: `user/${other.accountId}/1-huge.onnx`, file_name: 'huge.onnx', file_size: size },
    });
    expect([res.status, res.body.error.code]).toEqual([400, 'validation_failed']);
    expect(res.body.error.message).toContain('file_size');
    expect((await t.request('GET', '/v1/listings', { key: other.key })).body.items).toEqual([]);
  });

  it("reads another account's listing as 404", async () => {
    const draft = await t.request('POST', '/v1/listings', { key: seller.key, body: { title: 'Private Draft' } });
    const other = await t.accountWithKey();
    expect((await t.request('GET', `/v1/listings/${draft.body.id}`, { key: other.key })).status).toBe(404);
    expect((await t.request('POST', `/v1/listings/${draft.body.id}/publish`, { key: other.key })).status).toBe(404);
    expect((await t.request('GET', '/v1/listings', { key: other.key })).body.items).toEqual([]);
  });

  it('lets a listings:write key reprice but not upload', async () => {
    const writer = await t.accountWithKey({ scopes: ['listings:write', 'listings:read'] });
    const draft = await t.request('POST', '/v1/listings', { key: writer.key, body: { title: 'Reprice Me' } });
    const res = await t.request('PATCH', `/v1/listings/${draft.body.id}`, { key: writer.key, body: { price_cents: 300, title: 'Repriced' } });
    expect(res.body).toMatchObject({ price: { amount: 300, currency: 'usd' }, title: 'Repriced', slug: 'reprice-me' });
    expect((await t.request('POST', '/v1/uploads', { key: writer.key, body: { file_name: 'a.onnx', file_size: 1 } })).status).toBe(403);
  });

  it('rejects an unknown status filter', async () => {
    const res = await t.request('GET', '/v1/listings?status=deleted', { key: seller.key });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
  });
});
