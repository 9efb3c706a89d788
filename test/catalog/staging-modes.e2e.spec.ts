import { modelBody, modelBytes, upload } from './catalog-client';
import { startTestApp, TestApp } from '../support/app';

/**
 * Issue 24, crash item 2: an account holds keys of both modes, and a storage_path has the same
 * shape in each; a file staged in one mode is not there for the other.
 */
describe('staging uploads are kept apart by mode', () => {
  let t: TestApp;
  const keys = {} as Record<'test' | 'live', string>;
  let accountId: string;

  beforeAll(async () => {
    t = await startTestApp();
    const scopes = ['models:upload', 'models:read', 'datasets:upload', 'datasets:read'];
    const first = await t.accountWithKey({ mode: 'test', scopes });
    accountId = first.accountId;
    keys.test = first.key;
    const live = await t.admin('POST', '/admin/keys', { account: accountId, mode: 'live', tier: 'free', scopes });
    expect(live.status).toBe(201);
    keys.live = live.body.key;
  });
  afterAll(() => t.close());

  const check = (mode: 'test' | 'live', storagePath: string) =>
    t.request('PUT', '/v1/uploads', { key: keys[mode], body: { storage_path: storagePath } });
  const countOf = async (type: string) => Number((await t.db.query<{ n: string }>('SELECT count(*) AS n FROM events WHERE type = $1', [type])).rows[0].n);

  it.each([
    ['test', 'live'],
    ['live', 'test'],
  ] as const)('a file staged with a %s key is not found with a %s key: neither checked, nor drafted from, nor published', async (staged, other) => {
    // A name of its own: paths are named by the second, and the other case's file must not be at this one's path.
    const grant = await upload(t, keys[staged], `policy-${staged}.onnx`, modelBytes(`bytes staged in ${staged}`));
    expect(grant.storage_path).toMatch(new RegExp(`^user/${accountId}/\\d+-policy-${staged}\\.onnx$`));
    expect((await check(staged, grant.storage_path)).body).toEqual({ exists: true, size: grant.file_size });
    expect((await check(other, grant.storage_path)).body).toEqual({ exists: false, size: 0 });

    const published = await countOf('ListingPublished');
    const refused = await t.request('POST', '/v1/models', { key: keys[other], body: modelBody(grant, { title: `Crossing from ${staged}` }) });
    expect([refused.status, refused.body.error?.code]).toEqual([400, 'file_not_found']);
    expect(await countOf('ListingPublished')).toBe(published);

    // A draft in the other mode naming the path cannot be published either.
    const draft = await t.request('POST', '/v1/listings', { key: keys[other], body: { ...modelBody(grant, { title: `Draft from ${staged}` }), kind: 'model' } });
    if (draft.status === 201) {
      const publish = await t.request('POST', `/v1/listings/${draft.body.id}/publish`, { key: keys[other] });
      expect([publish.status, publish.body.error?.code]).toEqual([400, 'file_not_found']);
    }
    expect(await countOf('ListingPublished')).toBe(published);

    // In its own mode the same file publishes, and its buyer-facing copy downloads.
    const own = await t.request('POST', '/v1/models', { key: keys[staged], body: modelBody(grant, { title: `Own ${staged}` }) });
    expect(own.status).toBe(201);
    const download = await t.request('POST', `/v1/models/${own.body.id}/download`, { key: keys[staged] });
    expect(download.status).toBe(200);
    expect((await t.storage('GET', download.body.url)).bytes).toEqual(modelBytes(`bytes staged in ${staged}`));
  });

  it("a dataset's shards are its mode's: the other mode's key sees no such dataset", async () => {
    const dataset = await t.request('POST', '/v1/datasets', { key: keys.test, body: { title: 'Test-mode runs', description: 'd', category: 'manipulation', license: 'MIT' } });
    expect(dataset.status).toBe(201);
    const shard = await t.request('POST', `/v1/datasets/${dataset.body.id}/shards`, { key: keys.test, body: { name: 'run-1.mcap', size: 5 } });
    expect(shard.status).toBe(200);
    expect((await t.storage('PUT', shard.body.upload_url, { payload: 'shard', headers: { 'content-type': 'application/octet-stream' } })).status).toBe(200);
    expect((await t.request('GET', `/v1/datasets/${dataset.body.id}/shards`, { key: keys.test })).body).toMatchObject({ count: 1, total_bytes: 5 });
    expect((await check('test', shard.body.storage_path)).body).toEqual({ exists: true, size: 5 });
    expect((await check('live', shard.body.storage_path)).body).toEqual({ exists: false, size: 0 });
    expect((await t.request('GET', `/v1/datasets/${dataset.body.id}/shards`, { key: keys.live })).status).toBe(404);
  });

  it.each([
    ['test', 'live'],
    ['live', 'test'],
  ] as const)('a multipart upload started with a %s key is 404 to the %s key: no part URLs, no completion, no abort (issue 39)', async (started, other) => {
    const granted = await t.request('POST', '/v1/uploads', { key: keys[started], body: { file_name: `big-${started}.safetensors`, file_size: 200 * 1024 * 1024 } });
    expect(granted.status).toBe(200);
    const { storage_path } = granted.body;
    const { upload_id } = granted.body.multipart;
    const calls = [
      ['/v1/uploads/parts', { storage_path, upload_id, part_numbers: [1] }],
      ['/v1/uploads/complete', { storage_path, upload_id, parts: [{ part_number: 1, etag: '"x"' }] }],
      ['/v1/uploads/abort', { storage_path, upload_id }],
    ] as const;
    for (const [path, body] of calls) {
      const res = await t.request('POST', path, { key: keys[other], body });
      expect({ path, status: res.status, code: res.body.error?.code, parts: res.body.parts }).toEqual({ path, status: 404, code: 'not_found', parts: undefined });
    }
    // The upload is untouched for its own mode: its part URLs are still signed, and it can be aborted.
    expect((await t.request('POST', '/v1/uploads/parts', { key: keys[started], body: { storage_path, upload_id, part_numbers: [2] } })).body.parts).toHaveLength(1);
    expect((await t.request('POST', '/v1/uploads/abort', { key: keys[started], body: { storage_path, upload_id } })).body).toMatchObject({ aborted: true });
  });
});
