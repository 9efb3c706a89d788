import { startTestApp } from '../support/app';
import { buy } from '../commerce/commerce-client';
import { eventsOf, modelBytes, publishModel, sha256 } from './catalog-client';

describe('POST /v1/models/{id_or_slug}/download', () => {
  let t: Awaited<ReturnType<typeof startTestApp>>;
  let seller: { accountId: string; key: string };
  let buyer: { accountId: string; key: string };

  beforeAll(async () => {
    t = await startTestApp();
    seller = await t.accountWithKey({ name: 'Seller Co' });
    buyer = await t.accountWithKey({ scopes: ['models:read'] });
  });
  afterAll(() => t.close());

  it('gives another account a 120 s signed URL of a free model, counts the download and records AssetDownloaded', async () => {
    const model = await publishModel(t, seller.key, { title: 'Free Policy' }, 'free-weights');
    const res = await t.request('POST', `/v1/models/${model.slug}/download`, { key: buyer.key });
    expect(res.status).toBe(200);
    // The local store's own route, or the published key in the S3 pass's bucket.
    const weights = modelBytes('free-weights');
    const url = t.s3 ? `/${t.s3.bucket}/published/${sha256(weights)}?` : '/storage/';
    expect(res.body).toEqual({ url: expect.stringContaining(url), expires_in: 120, file_name: 'policy.onnx', file_size: weights.length, file_sha256: sha256(weights) });
    const bytes = await t.storage('GET', res.body.url);
    expect(bytes.status).toBe(200);
    expect(bytes.bytes).toEqual(weights);

    expect((await t.request('GET', `/v1/models/${model.id}`, { key: buyer.key })).body.downloads).toBe(1);
    const downloads = await eventsOf(t, 'AssetDownloaded', seller.accountId);
    expect(downloads).toHaveLength(1);
    expect(downloads[0].stream_id).toBe(`listing-test-${model.id}`);
    expect(downloads[0].data).toEqual({
      listing_id: model.id,
      account_id: seller.accountId,
      buyer_account_id: buyer.accountId,
      mode: 'test',
      asset: { id: model.id, slug: model.slug, title: 'Free Policy', type: 'rl-policy' },
      downloaded_at: expect.any(String),
    });
  });

  it('counts every one of many concurrent downloads', async () => {
    const model = await publishModel(t, seller.key, { title: 'Popular' });
    const results = await Promise.all(Array.from({ length: 8 }, () => t.request('POST', `/v1/models/${model.id}/download`, { key: buyer.key })));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect((await t.request('GET', `/v1/models/${model.id}`, { key: buyer.key })).body.downloads).toBe(8);
  });

  it('answers 402 purchase_required with the price for a paid model, and changes nothing', async () => {
    const model = await publishModel(t, seller.key, { title: 'Paid Policy', price_cents: 4900 });
    const res = await t.request('POST', `/v1/models/${model.id}/download`, { key: buyer.key });
    expect(res.status).toBe(402);
    expect(res.body.error).toMatchObject({
      code: 'purchase_required',
      price: { amount: 4900, currency: 'usd' },
      asset: { id: model.id, slug: 'paid-policy' },
    });
    expect((await t.request('GET', `/v1/models/${model.id}`, { key: buyer.key })).body.downloads).toBe(0);
    expect((await eventsOf(t, 'AssetDownloaded', seller.accountId)).filter((e) => e.data.listing_id === model.id)).toEqual([]);
  });

  it("lets the owner fetch their own paid model without counting it as a download", async () => {
    const model = await publishModel(t, seller.key, { title: 'Own Paid', price_cents: 100 });
    const res = await t.request('POST', `/v1/models/${model.id}/download`, { key: seller.key });
    expect(res.status).toBe(200);
    expect((await t.request('GET', `/v1/models/${model.id}`, { key: seller.key })).body.downloads).toBe(0);
  });

  it("answers 400 to the owner downloading a draft that has no file yet", async () => {
    const draft = await t.request('POST', '/v1/listings', { key: seller.key, body: { title: 'No File Yet' } });
    const res = await t.request('POST', `/v1/models/${draft.body.id}/download`, { key: seller.key });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
  });

  it('answers 404 here for a model unpublished through another instance after this one served it', async () => {
    const model = await publishModel(t, seller.key, { title: 'Retired Elsewhere' });
    expect((await t.request('POST', `/v1/models/${model.id}/download`, { key: buyer.key })).status).toBe(200);
    const other = await startTestApp({ shared: t.database });
    try {
      expect((await other.request('DELETE', `/v1/models/${model.id}`, { key: seller.key })).status).toBe(200);
    } finally {
      await other.close();
    }
    expect((await t.request('POST', `/v1/models/${model.id}/download`, { key: buyer.key })).status).toBe(404);
  });

  it('answers 404 for an unpublished model and for a model of the other mode', async () => {
    const model = await publishModel(t, seller.key, { title: 'Gone Soon' });
    await t.request('DELETE', `/v1/models/${model.id}`, { key: seller.key });
    expect((await t.request('POST', `/v1/models/${model.id}/download`, { key: buyer.key })).status).toBe(404);
    const live = await t.accountWithKey({ mode: 'live' });
    const other = await publishModel(t, seller.key, { title: 'Test Mode Only' });
    expect((await t.request('POST', `/v1/models/${other.id}/download`, { key: live.key })).status).toBe(404);
  });

  it('keeps serving a bought model to its buyer after the seller unpublishes it, and to nobody else', async () => {
    const model = await publishModel(t, seller.key, { title: 'Bought Then Retired', price_cents: 2500 }, 'retired-weights');
    const holder = await t.accountWithKey();
    await buy(t, holder.key, model.slug);
    expect((await t.request('POST', `/v1/models/${model.slug}/download`, { key: holder.key })).status).toBe(200);
    expect((await t.request('DELETE', `/v1/models/${model.slug}`, { key: seller.key })).status).toBe(200);

    const again = await t.request('POST', `/v1/models/${model.slug}/download`, { key: holder.key });
    expect(again.status).toBe(200);
    expect((await t.storage('GET', again.body.url)).bytes).toEqual(modelBytes('retired-weights'));
    expect((await eventsOf(t, 'AssetDownloaded', seller.accountId)).filter((e) => e.data.listing_id === model.id)).toHaveLength(2);
    // Everyone who did not buy it sees no such model: 404, not a price.
    const stranger = await t.request('POST', `/v1/models/${model.slug}/download`, { key: buyer.key });
    expect([stranger.status, stranger.body.error.code]).toEqual([404, 'not_found']);
    expect((await t.request('GET', `/v1/models/${model.slug}`, { key: holder.key })).status).toBe(404);
    // Nor does the same account in the other mode.
    const { key: liveKey } = await t.accountWithKey({ mode: 'live' });
    expect((await t.request('POST', `/v1/models/${model.id}/download`, { key: liveKey })).status).toBe(404);
  });

  it('accepts datasets:read as the download scope and refuses a key with neither read scope', async () => {
    const model = await publishModel(t, seller.key, { title: 'Scoped' });
    const datasetsReader = await t.accountWithKey({ scopes: ['datasets:read'] });
    expect((await t.request('POST', `/v1/models/${model.id}/download`, { key: datasetsReader.key })).status).toBe(200);
    const uploader = await t.accountWithKey({ scopes: ['models:upload'] });
    const refused = await t.request('POST', `/v1/models/${model.id}/download`, { key: uploader.key });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('scope_required');
  });
});
