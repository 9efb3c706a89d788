import { startTestApp, TestApp } from '../support/app';
import { buy, withClockAhead } from '../commerce/commerce-client';
import { eventually } from '../support/eventually';
import { mcapFile } from '../support/asset-files';
import { eventsOf, sha256 } from './catalog-client';

describe('datasets and shards', () => {
  let t: TestApp;
  let owner: { accountId: string; key: string };
  let reader: { accountId: string; key: string };

  beforeAll(async () => {
    t = await startTestApp();
    owner = await t.accountWithKey({ name: 'Data Farm', scopes: ['datasets:upload', 'datasets:read', 'listings:read'] });
    reader = await t.accountWithKey({ scopes: ['datasets:read'] });
  });
  afterAll(() => t.close());

  const createDataset = async (body: Record<string, unknown>) => {
    const res = await t.request('POST', '/v1/datasets', { key: owner.key, body });
    expect(res.status).toBe(201);
    return res.body;
  };
  // Shards are inspected at publish (issue 40): a .mcap shard is a real recording, `content` its writer's name.
  const shardBytes = (name: string, content: string) => (name.endsWith('.mcap') ? mcapFile(content) : Buffer.from(content));
  const putShard = async (datasetId: string, name: string, content: string) => {
    const bytes = shardBytes(name, content);
    const minted = await t.request('POST', `/v1/datasets/${datasetId}/shards`, { key: owner.key, body: { name, size: bytes.length } });
    expect(minted.status).toBe(200);
    const put = await t.storage('PUT', minted.body.upload_url, { payload: bytes });
    expect(put.status).toBe(200);
    return minted.body;
  };

  it('creates a draft, refuses to publish it before a shard landed, then publishes and serves shards', async () => {
    const dataset = await createDataset({ title: 'Warehouse Runs', description: 'Lidar sweeps', type: 'telemetry' });
    expect(dataset).toMatchObject({ kind: 'dataset', type: 'telemetry', status: 'draft', file: null, price: { amount: 0, currency: 'usd' } });
    expect((await t.request('GET', `/v1/datasets/${dataset.id}`, { key: reader.key })).status).toBe(404);

    const early = await t.request('POST', `/v1/datasets/${dataset.id}/publish`, { key: owner.key });
    expect(early.status).toBe(400);
    expect(early.body.error.code).toBe('file_not_found');
    expect(await eventsOf(t, 'ListingPublished', owner.accountId)).toEqual([]);

    // A minted shard that never landed is not in the list: it is read from storage.
    await t.request('POST', `/v1/datasets/${dataset.id}/shards`, { key: owner.key, body: { name: 'never.mcap', size: 5 } });
    const minted = await putShard(dataset.id, 'part-0001.mcap', 'aaaa');
    expect(minted).toMatchObject({
      name: 'part-0001.mcap',
      storage_path: `user/${owner.accountId}/datasets/${dataset.id}/part-0001.mcap`,
      token: expect.any(String),
    });
    await putShard(dataset.id, 'part-0002.mcap', 'bbbbbb');
    const shards = await t.request('GET', `/v1/datasets/${dataset.id}/shards`, { key: owner.key });
    expect(shards.body).toEqual({
      items: [
        { name: 'part-0001.mcap', size: mcapFile('aaaa').length, sha256: sha256(mcapFile('aaaa')) },
        { name: 'part-0002.mcap', size: mcapFile('bbbbbb').length, sha256: sha256(mcapFile('bbbbbb')) },
      ],
      count: 2,
      total_bytes: mcapFile('aaaa').length + mcapFile('bbbbbb').length,
    });

    const published = await t.request('POST', `/v1/datasets/${dataset.slug}/publish`, { key: owner.key });
    expect(published.status).toBe(200);
    expect(published.body.status).toBe('published');
    const read = await t.request('GET', `/v1/datasets/${dataset.slug}`, { key: reader.key });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: dataset.id, type: 'telemetry', author: { slug: 'data-farm', name: 'Data Farm' } });
    expect((await t.request('GET', '/v1/datasets?q=lidar', { key: reader.key })).body.items.map((d: any) => d.id)).toEqual([dataset.id]);
    expect((await t.request('GET', '/v1/models?q=lidar', { key: owner.key })).status).toBe(403);

    const shard = await t.request('GET', `/v1/datasets/${dataset.id}/shards/part-0002.mcap`, { key: reader.key });
    expect(shard.body).toEqual({ name: 'part-0002.mcap', size: mcapFile('bbbbbb').length, sha256: sha256(mcapFile('bbbbbb')), url: expect.any(String), expires_in: 120 });
    expect((await t.storage('GET', shard.body.url)).bytes).toEqual(mcapFile('bbbbbb'));
    expect((await t.request('GET', `/v1/datasets/${dataset.id}/shards/never.mcap`, { key: reader.key })).status).toBe(404);
  });

  it('counts a dataset download once per buyer and UTC day, at the first shard fetched, and fires asset.downloaded then', async () => {
    const dataset = await createDataset({ title: 'Counted Sweeps', type: 'telemetry' });
    await putShard(dataset.id, 'a.mcap', 'aaaa');
    await putShard(dataset.id, 'b.mcap', 'bbbb');
    await t.request('POST', `/v1/datasets/${dataset.id}/publish`, { key: owner.key });
    const other = await t.accountWithKey({ scopes: ['datasets:read'] });
    const fetch = (key: string, name: string) => t.request('GET', `/v1/datasets/${dataset.id}/shards/${name}`, { key });
    const downloads = async () => (await t.request('GET', `/v1/datasets/${dataset.id}`, { key: owner.key })).body.downloads;

    // One buyer's day: every shard, some twice, some at once: one download.
    expect((await Promise.all([fetch(reader.key, 'a.mcap'), fetch(reader.key, 'b.mcap'), fetch(reader.key, 'a.mcap')])).map((r) => r.status)).toEqual([200, 200, 200]);
    expect((await fetch(reader.key, 'b.mcap')).status).toBe(200);
    // The owner fetching their own shards is not a download; another reader's is.
    expect((await fetch(owner.key, 'a.mcap')).status).toBe(200);
    expect((await fetch(other.key, 'b.mcap')).status).toBe(200);
    const events = (await eventsOf(t, 'AssetDownloaded', owner.accountId)).filter((e) => e.data.listing_id === dataset.id);
    expect(events.map((e) => [e.stream_id, e.data.buyer_account_id, e.data.asset.type]).sort()).toEqual(
      [
        [`listing-test-${dataset.id}`, reader.accountId, 'telemetry'],
        [`listing-test-${dataset.id}`, other.accountId, 'telemetry'],
      ].sort(),
    );
    await eventually(async () => (await downloads()) === 2, 15000, 'the count');

    // The next UTC day, the same buyer's first fetch counts again.
    await withClockAhead(24 * 3600 * 1000, async () => expect((await fetch(reader.key, 'a.mcap')).status).toBe(200));
    await eventually(async () => (await downloads()) === 3, 15000, 'the next day');
    // A shard that does not exist, or of a dataset the caller may not fetch, counts nothing.
    expect((await fetch(other.key, 'c.mcap')).status).toBe(404);
    expect((await eventsOf(t, 'AssetDownloaded', owner.accountId)).filter((e) => e.data.listing_id === dataset.id)).toHaveLength(3);
  });

  it('asks for a purchase before serving a shard of a paid dataset to another account', async () => {
    const dataset = await createDataset({ title: 'Paid Calib', type: 'calibration', price_cents: 1200 });
    await putShard(dataset.id, 'cams.json', '{}');
    await t.request('POST', `/v1/datasets/${dataset.id}/publish`, { key: owner.key });
    const res = await t.request('GET', `/v1/datasets/${dataset.id}/shards/cams.json`, { key: reader.key });
    expect(res.status).toBe(402);
    expect(res.body.error).toMatchObject({ code: 'purchase_required', price: { amount: 1200, currency: 'usd' }, asset: { id: dataset.id } });
    expect((await t.request('GET', `/v1/datasets/${dataset.id}/shards/cams.json`, { key: owner.key })).status).toBe(200);
  });

  it("keeps a bought dataset's shards listable and fetchable by its buyer after the seller unpublishes it, and by nobody else", async () => {
    const dataset = await createDataset({ title: 'Bought Sweeps', price_cents: 900 });
    await putShard(dataset.id, 'sweep-1.mcap', 'sweep!');
    await t.request('POST', `/v1/datasets/${dataset.id}/publish`, { key: owner.key });
    const holder = await t.accountWithKey();
    await buy(t, holder.key, dataset.slug);
    expect((await t.request('DELETE', `/v1/datasets/${dataset.slug}`, { key: owner.key })).status).toBe(200);

    const list = await t.request('GET', `/v1/datasets/${dataset.slug}/shards`, { key: holder.key });
    const sweep = mcapFile('sweep!');
    expect(list.body).toEqual({ items: [{ name: 'sweep-1.mcap', size: sweep.length, sha256: sha256(sweep) }], count: 1, total_bytes: sweep.length });
    const shard = await t.request('GET', `/v1/datasets/${dataset.id}/shards/sweep-1.mcap`, { key: holder.key });
    expect(shard.status).toBe(200);
    expect((await t.storage('GET', shard.body.url)).bytes).toEqual(sweep);
    for (const path of [`/v1/datasets/${dataset.id}/shards`, `/v1/datasets/${dataset.id}/shards/sweep-1.mcap`]) {
      const res = await t.request('GET', path, { key: reader.key });
      expect([path, res.status, res.body.error.code]).toEqual([path, 404, 'not_found']);
    }
  });

  // Issue 41: folders are allowed; climbing out, absolute paths, backslashes, too deep or too long are not.
  it.each([
    '..', '../escape', 'data/../../x', 'data/./x', '/etc/passwd', 'data\\x.parquet', 'data//x', 'data/', '', 'semi;colon', 'caf\u00e9.csv',
    Array.from({ length: 17 }, () => 'd').join('/'), 'a'.repeat(513),
  ])(
    'refuses the shard name %p and mints nothing',
    async (name) => {
      const dataset = await createDataset({ title: 'Names' });
      const res = await t.request('POST', `/v1/datasets/${dataset.id}/shards`, { key: owner.key, body: { name, size: 3 } });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.message).toContain('"name"');
      expect((await t.request('GET', `/v1/datasets/${dataset.id}/shards`, { key: owner.key })).body).toEqual({ items: [], count: 0, total_bytes: 0 });
    },
  );

  it('keeps shard uploads to the owner and drafts invisible to others', async () => {
    const dataset = await createDataset({ title: 'Owner Only' });
    const uploader = await t.accountWithKey({ scopes: ['datasets:upload'] });
    expect((await t.request('POST', `/v1/datasets/${dataset.id}/shards`, { key: uploader.key, body: { name: 'x.csv', size: 1 } })).status).toBe(404);
    expect((await t.request('GET', `/v1/datasets/${dataset.id}/shards`, { key: reader.key })).status).toBe(404);
  });

  it('patches, unpublishes with DELETE, and rejects a non-dataset type', async () => {
    const dataset = await createDataset({ title: 'Short Lived' });
    await putShard(dataset.id, 'a.csv', 'x');
    await t.request('POST', `/v1/datasets/${dataset.id}/publish`, { key: owner.key });
    const patched = await t.request('PATCH', `/v1/datasets/${dataset.id}`, { key: owner.key, body: { price_cents: 0, version: '1.1.0' } });
    expect(patched.body.version).toBe('1.1.0');
    const deleted = await t.request('DELETE', `/v1/datasets/${dataset.id}`, { key: owner.key });
    expect(deleted.body.status).toBe('unpublished');
    expect((await t.request('GET', `/v1/datasets/${dataset.id}`, { key: reader.key })).status).toBe(404);
    const bad = await t.request('POST', '/v1/datasets', { key: owner.key, body: { title: 'Wrong', type: 'onnx-model' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('"type"');
  });

  it('refuses a dataset priced 1-99 cents and creates nothing', async () => {
    const before = (await t.request('GET', '/v1/listings', { key: owner.key })).body.items.length;
    const res = await t.request('POST', '/v1/datasets', { key: owner.key, body: { title: 'Cheap Data', price_cents: 42 } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('price_too_low');
    expect((await t.request('GET', '/v1/listings', { key: owner.key })).body.items).toHaveLength(before);
  });
});
