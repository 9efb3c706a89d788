import { CopyObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CatalogEvents, ListingDrafted, ListingPublished } from '../../src/catalog/events';
import { Streams } from '../../src/platform/streams';
import { EventWriter } from '../../src/projection-runner/event-writer';
import { newId } from '../../src/platform/ids';
import { BLOB_STORE, BlobStore } from '../../src/storage/blob-store';
import { s3ClientFor, startS3Server, S3TestServer } from '../storage/s3-server';
import { startTestApp, TestApp } from '../support/app';
import { mcapFile } from '../support/asset-files';
import { eventsOf, modelBody, modelBytes, sha256 } from './catalog-client';

// Real ONNX models (published files are inspected, issue 40) of the same length, and two recordings.
const V1 = modelBytes('sixteen-bytes-v1');
const V2 = modelBytes('sixteen-bytes-v2');
const SIZE = V1.length;
const RUN_V1 = mcapFile('run-v1');
const RUN_V2 = mcapFile('run-v2');

/**
 * Issue 10 item 6: a published file cannot be replaced. Publishing copies it to a
 * content-addressed key and records size and sha256; the old upload URL can only write the
 * staging key, and every download checks the copy against the record. On both stores.
 */
describe.each(['local', 's3'] as const)('published files are immutable on the %s store', (adapter) => {
  let t: TestApp;
  let s3: S3TestServer | undefined;
  let seller: { accountId: string; key: string };
  let buyer: { accountId: string; key: string };

  beforeAll(async () => {
    s3 = adapter === 's3' ? await startS3Server() : undefined;
    t = await startTestApp({ env: s3?.env ?? {}, localStore: adapter === 'local' });
    seller = await t.accountWithKey({ name: 'Immutable Robotics' });
    buyer = await t.accountWithKey({ scopes: ['models:read', 'datasets:read'] });
  });
  afterAll(async () => {
    await t.close();
    await s3?.close();
  });

  /** A signed storage URL: the local store's are answered by the app, S3's by the S3 server. */
  const storage = async (method: 'GET' | 'PUT', url: string, body?: string | Buffer) => {
    const res = await t.storage(method, url, { payload: body });
    return { status: res.status, text: res.text, bytes: res.bytes };
  };

  /** Writes an object behind the service's back, as someone with access to the bucket could. */
  const overwriteInStorage = async (key: string, content: string | Buffer) => {
    if (adapter === 'local') return fs.writeFileSync(path.join(t.dataDir, 'blobs', key), content);
    await s3ClientFor(t.s3!).send(new PutObjectCommand({ Bucket: t.s3!.bucket, Key: key, Body: content }));
  };

  const grantAndPut = async (fileName: string, content: Buffer) => {
    const grant = await t.request('POST', '/v1/uploads', { key: seller.key, body: { file_name: fileName, file_size: content.length } });
    expect((await storage('PUT', grant.body.upload_url, content)).status).toBe(200);
    return grant.body;
  };

  const download = async (idOrSlug: string) => {
    const res = await t.request('POST', `/v1/models/${idOrSlug}/download`, { key: buyer.key });
    return { res, bytes: res.status === 200 ? (await storage('GET', res.body.url)).bytes : undefined };
  };

  it('serves buyers the bytes published even after two re-PUTs through the old upload URL', async () => {
    const grant = await grantAndPut('arm.onnx', V1);
    const published = await t.request('POST', '/v1/models', { key: seller.key, body: modelBody(grant, { title: 'Frozen Arm' }) });
    expect(published.status).toBe(201);
    expect(published.body.file).toEqual({ name: 'arm.onnx', size: SIZE, extension: '.onnx', sha256: sha256(V1) });

    // Whether the store takes these writes (the local one and s3rver do; real S3 refuses
    // a length other than the signed one) does not matter: they reach the staging key only.
    await storage('PUT', grant.upload_url, 'evil!');
    await storage('PUT', grant.upload_url, V2);

    const { res, bytes } = await download(published.body.slug);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ file_name: 'arm.onnx', file_size: SIZE, file_sha256: sha256(V1) });
    expect(bytes).toEqual(V1);
    expect((await t.request('GET', `/v1/models/${published.body.id}`, { key: buyer.key })).body.file).toMatchObject({ size: SIZE, sha256: sha256(V1) });
  });

  it('records name, size, sha256 and the content-addressed key in ListingPublished, and keeps them on republish', async () => {
    const grant = await grantAndPut('nav.onnx', V1);
    const draft = await t.request('POST', '/v1/listings', { key: seller.key, body: modelBody(grant, { title: 'Republished Nav' }) });
    expect((await t.request('POST', `/v1/listings/${draft.body.id}/publish`, { key: seller.key })).status).toBe(200);
    await storage('PUT', grant.upload_url, V2);
    await t.request('POST', `/v1/listings/${draft.body.id}/unpublish`, { key: seller.key });
    expect((await t.request('POST', `/v1/listings/${draft.body.id}/publish`, { key: seller.key })).status).toBe(200);

    const files = (await eventsOf(t, 'ListingPublished', seller.accountId)).filter((e) => e.data.listing_id === draft.body.id).map((e) => e.data.files);
    const frozen = [{ name: 'nav.onnx', size: SIZE, sha256: sha256(V1), path: `published/${sha256(V1)}`, inspection: expect.objectContaining({ format: 'onnx', producer: 'sixteen-bytes-v1 1' }) }];
    expect(files).toEqual([frozen, frozen]);
    expect((await download(draft.body.id)).bytes).toEqual(V1);
  });

  it("fixes a published dataset's shards: a re-PUT changes nothing served and no shard can be added", async () => {
    const dataset = await t.request('POST', '/v1/datasets', { key: seller.key, body: { title: 'Frozen Runs' } });
    const minted = await t.request('POST', `/v1/datasets/${dataset.body.id}/shards`, { key: seller.key, body: { name: 'run-1.mcap', size: RUN_V1.length } });
    expect((await storage('PUT', minted.body.upload_url, RUN_V1)).status).toBe(200);
    expect((await t.request('POST', `/v1/datasets/${dataset.body.id}/publish`, { key: seller.key })).status).toBe(200);

    await storage('PUT', minted.body.upload_url, RUN_V2);
    const shard = await t.request('GET', `/v1/datasets/${dataset.body.id}/shards/run-1.mcap`, { key: buyer.key });
    expect(shard.body).toMatchObject({ name: 'run-1.mcap', size: RUN_V1.length, sha256: sha256(RUN_V1) });
    expect((await storage('GET', shard.body.url)).bytes).toEqual(RUN_V1);
    expect((await t.request('GET', `/v1/datasets/${dataset.body.id}/shards`, { key: buyer.key })).body).toEqual({
      items: [{ name: 'run-1.mcap', size: RUN_V1.length, sha256: sha256(RUN_V1) }],
      count: 1,
      total_bytes: RUN_V1.length,
    });

    const more = await t.request('POST', `/v1/datasets/${dataset.body.id}/shards`, { key: seller.key, body: { name: 'run-2.mcap', size: 3 } });
    expect(more.status).toBe(400);
    expect(more.body.error).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/fixed its shards/) });
  });

  // The local store cannot meet this race: it copies the very file it hashed.
  (adapter === 's3' ? it : it.skip)('answers 409 conflict and records nothing when the upload is overwritten between hash and copy (S3 only)', async () => {
    const [before, after] = [modelBytes('racing-bytes-v1!'), modelBytes('racing-bytes-v2!')];
    const grant = await grantAndPut('race.onnx', before);
    const draft = await t.request('POST', '/v1/listings', { key: seller.key, body: modelBody(grant, { title: 'Raced Arm' }) });
    expect(draft.status).toBe(201);

    // Every S3 client of this process: the service's CopyObject runs after its GET hashed the
    // upload; the object changes on the server just before.
    const send = S3Client.prototype.send;
    let overwritten = false;
    const spy = jest.spyOn(S3Client.prototype, 'send').mockImplementation(async function (this: S3Client, ...args: any[]) {
      if (args[0] instanceof CopyObjectCommand && !overwritten) {
        overwritten = true;
        await overwriteInStorage(`test/${grant.storage_path}`, after);
      }
      return (send as (...a: any[]) => Promise<unknown>).apply(this, args);
    } as any);
    let publish;
    try {
      publish = await t.request('POST', `/v1/listings/${draft.body.id}/publish`, { key: seller.key });
    } finally {
      spy.mockRestore();
    }
    expect(overwritten).toBe(true);
    expect(publish.status).toBe(409);
    expect(publish.body.error).toMatchObject({ code: 'conflict', message: expect.stringContaining('overwritten while it was being published') });
    expect((await eventsOf(t, 'ListingPublished', seller.accountId)).filter((e) => e.data.listing_id === draft.body.id)).toEqual([]);
    expect((await t.request('GET', `/v1/listings/${draft.body.id}`, { key: seller.key })).body.status).toBe('draft');
    for (const content of [before, after]) {
      expect(await t.app.get<BlobStore>(BLOB_STORE).stat(`published/${sha256(content)}`)).toBeUndefined();
    }

    // Published again with nothing in between: the bytes now stored.
    expect((await t.request('POST', `/v1/listings/${draft.body.id}/publish`, { key: seller.key })).status).toBe(200);
    expect((await download(draft.body.id)).bytes).toEqual(after);
  });

  it('refuses, with 409 file_mismatch and no download recorded, a stored copy that no longer matches its record', async () => {
    const grant = await grantAndPut('tampered.onnx', modelBytes('sixteen-bytes-v3'));
    const published = await t.request('POST', '/v1/models', { key: seller.key, body: modelBody(grant, { title: 'Tampered' }) });
    await overwriteInStorage(`published/${published.body.file.sha256}`, 'evil!');

    const { res } = await download(published.body.id);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('file_mismatch');
    expect(res.body.error.message).toContain(`${SIZE} bytes`);
    expect(res.body.error.message).toContain('storage holds 5 bytes');
    expect((await eventsOf(t, 'AssetDownloaded', seller.accountId)).filter((e) => e.data.listing_id === published.body.id)).toEqual([]);
  });

  it('replays a listing published before files were recorded, and checks its download against the listed size', async () => {
    const grant = await grantAndPut('legacy.onnx', V1);
    const listingId = newId('lst');
    const now = new Date().toISOString();
    const drafted: ListingDrafted = {
      listing_id: listingId,
      account_id: seller.accountId,
      mode: 'test',
      kind: 'model',
      slug: `legacy-${adapter}`,
      author: { slug: 'immutable-robotics', name: 'Immutable Robotics' },
      details: {
        title: 'Legacy', description: '', type: 'rl-policy', category: '', license: 'MIT', version: '1.0.0',
        price: { amount: 0, currency: 'usd' }, tags: [], frameworks: [], hardware: [], sensors: [],
        ros_compatible: false, jetson_compatible: false, isaac_sim_compatible: false,
        file: { name: grant.file_name, size: SIZE, extension: '.onnx', storage_path: grant.storage_path },
      },
      created_at: now,
    };
    // The shape ListingPublished had before issue 10: no `files`.
    const legacy: ListingPublished = { listing_id: listingId, account_id: seller.accountId, mode: 'test', listing: {}, published_at: now };
    // Appended as they were stored then (no decider records a publish without files any more).
    await t.app.get(EventWriter).append(Streams.listing('test', listingId), [
      { type: CatalogEvents.ListingDrafted, data: { ...drafted } },
      { type: CatalogEvents.ListingPublished, data: { ...legacy } },
    ], 'no_stream');

    expect((await t.request('GET', `/v1/models/${listingId}`, { key: buyer.key })).body.file).toEqual({ name: 'legacy.onnx', size: SIZE, extension: '.onnx', sha256: null });
    const before = await download(listingId);
    expect(before.res.body).toMatchObject({ file_size: SIZE, file_sha256: null });
    expect(before.bytes).toEqual(V1);

    // Behind the service's back: a signature-checking S3 refuses a PUT of another length
    // through the old URL (it signs the granted size).
    await overwriteInStorage(`test/${grant.storage_path}`, 'evil!');
    const after = await download(listingId);
    expect(after.res.status).toBe(409);
    expect(after.res.body.error.code).toBe('file_mismatch');
  });
});
