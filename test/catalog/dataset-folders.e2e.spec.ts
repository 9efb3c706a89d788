import { startTestApp, TestApp } from '../support/app';
import { buy } from '../commerce/commerce-client';
import { sha256 } from './catalog-client';
import { EXTERNAL_S3_SKIP_REASON, onExternalS3 } from '../storage/s3-server';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeLeRobotDataset } from '../support/lerobot-fixture';

/** The local store checks a bound sha256 on receipt; on S3 the gateway does (test/storage/s3-presigned.e2e.spec.ts). */
const itOnLocalStore = onExternalS3 ? it.skip : it;
const onLocal = onExternalS3 ? ` (${EXTERNAL_S3_SKIP_REASON})` : '';

/** Issue 41: shard names as relative paths, prefix= on the list, and sha256 bound to uploads and listed. */
describe('dataset folders and checksums', () => {
  let t: TestApp;
  let owner: { accountId: string; key: string };
  let reader: { accountId: string; key: string };
  // Published shards are inspected (issue 40): the Parquet episodes are real ones, written by a Parquet writer.
  let episode0: Buffer;
  let episode1: Buffer;

  beforeAll(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folders-'));
    writeLeRobotDataset(dir, 2, 3);
    episode0 = fs.readFileSync(path.join(dir, 'data/chunk-000/episode_000000.parquet'));
    episode1 = fs.readFileSync(path.join(dir, 'data/chunk-000/episode_000001.parquet'));
    fs.rmSync(dir, { recursive: true, force: true });
    t = await startTestApp();
    owner = await t.accountWithKey({ scopes: ['datasets:upload', 'datasets:read', 'models:upload'] });
    reader = await t.accountWithKey({ scopes: ['datasets:read'] });
  });
  afterAll(() => t.close());

  const createDataset = async (title: string, price_cents = 0) => {
    const res = await t.request('POST', '/v1/datasets', { key: owner.key, body: { title, price_cents } });
    expect(res.status).toBe(201);
    return res.body;
  };
  const mint = (id: string, body: Record<string, unknown>) => t.request('POST', `/v1/datasets/${id}/shards`, { key: owner.key, body });
  const putShard = async (id: string, name: string, content: string | Buffer, withSha = false) => {
    const minted = await mint(id, { name, size: Buffer.byteLength(content), ...(withSha && { sha256: sha256(content) }) });
    expect(minted.status).toBe(200);
    // On S3 a bound sha256 travels as a signed header the grant names.
    expect((await t.storage('PUT', minted.body.upload_url, { payload: content, headers: minted.body.upload_headers })).status).toBe(200);
    return minted.body;
  };

  it('keeps folders in names and storage keys, serves a shard by its path and by its %2F form, and filters with prefix=', async () => {
    const dataset = await createDataset('Folder Runs');
    const minted = await putShard(dataset.id, 'data/chunk-000/episode_000000.parquet', episode0);
    expect(minted.storage_path).toBe(`user/${owner.accountId}/datasets/${dataset.id}/data/chunk-000/episode_000000.parquet`);
    await putShard(dataset.id, 'meta/info.json', '{"fps":30}');
    await putShard(dataset.id, 'data/chunk-000/episode_000001.parquet', episode1);

    const all = await t.request('GET', `/v1/datasets/${dataset.id}/shards`, { key: owner.key });
    expect(all.body).toEqual({
      items: [
        { name: 'data/chunk-000/episode_000000.parquet', size: episode0.length, sha256: sha256(episode0) },
        { name: 'data/chunk-000/episode_000001.parquet', size: episode1.length, sha256: sha256(episode1) },
        { name: 'meta/info.json', size: 10, sha256: sha256('{"fps":30}') },
      ],
      count: 3,
      total_bytes: episode0.length + episode1.length + 10,
    });
    const data = await t.request('GET', `/v1/datasets/${dataset.id}/shards?prefix=data/`, { key: owner.key });
    expect(data.body.items.map((s: any) => s.name)).toEqual(['data/chunk-000/episode_000000.parquet', 'data/chunk-000/episode_000001.parquet']);
    expect((await t.request('GET', `/v1/datasets/${dataset.id}/shards?prefix=meta%2Finfo`, { key: owner.key })).body.count).toBe(1);
    const bad = await t.request('GET', `/v1/datasets/${dataset.id}/shards?prefix=../`, { key: owner.key });
    expect([bad.status, bad.body.error.code, bad.body.error.message]).toEqual([400, 'validation_failed', expect.stringContaining('"prefix"')]);

    for (const path of ['meta/info.json', 'meta%2Finfo.json']) {
      const shard = await t.request('GET', `/v1/datasets/${dataset.id}/shards/${path}`, { key: owner.key });
      expect([path, shard.status, shard.body.name, shard.body.sha256]).toEqual([path, 200, 'meta/info.json', sha256('{"fps":30}')]);
      expect((await t.storage('GET', shard.body.url)).text).toBe('{"fps":30}');
    }
    expect((await t.request('GET', `/v1/datasets/${dataset.id}/shards/meta/missing.json`, { key: owner.key })).status).toBe(404);

    // Published, the frozen files keep their folders and sha256.
    expect((await t.request('POST', `/v1/datasets/${dataset.id}/publish`, { key: owner.key })).status).toBe(200);
    const frozen = await t.request('GET', `/v1/datasets/${dataset.id}/shards?prefix=meta/`, { key: reader.key });
    expect(frozen.body.items).toEqual([{ name: 'meta/info.json', size: 10, sha256: sha256('{"fps":30}') }]);
    const served = await t.request('GET', `/v1/datasets/${dataset.id}/shards/data/chunk-000/episode_000001.parquet`, { key: reader.key });
    expect(sha256((await t.storage('GET', served.body.url)).bytes)).toBe(sha256(episode1));
  });

  itOnLocalStore(`refuses a PUT of other bytes than the sha256 a shard was minted with, storing nothing, and takes the right ones${onLocal}`, async () => {
    const dataset = await createDataset('Checked Runs');
    const minted = await mint(dataset.id, { name: 'videos/front/episode_000000.mp4', size: 5, sha256: sha256('right') });
    expect(minted.status).toBe(200);
    expect(minted.body.sha256).toBe(sha256('right'));
    const wrong = await t.storage('PUT', minted.body.upload_url, { payload: 'wrong' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.code).toBe('checksum_mismatch');
    expect((await t.request('GET', `/v1/datasets/${dataset.id}/shards`, { key: owner.key })).body.count).toBe(0);
    // A URL edited to drop or change the sha256 no longer matches its signature.
    const url = new URL(minted.body.upload_url);
    url.searchParams.set('sha256', sha256('wrong'));
    expect((await t.storage('PUT', url.toString(), { payload: 'wrong' })).status).toBe(403);
    url.searchParams.delete('sha256');
    expect((await t.storage('PUT', url.toString(), { payload: 'wrong' })).status).toBe(403);

    expect((await t.storage('PUT', minted.body.upload_url, { payload: 'right' })).status).toBe(200);
    const list = await t.request('GET', `/v1/datasets/${dataset.id}/shards`, { key: owner.key });
    expect(list.body.items).toEqual([{ name: 'videos/front/episode_000000.mp4', size: 5, sha256: sha256('right') }]);

    const badSha = await mint(dataset.id, { name: 'x.csv', size: 1, sha256: 'ABC' });
    expect([badSha.status, badSha.body.error.message]).toEqual([400, expect.stringContaining('sha256')]);
  });

  it('shows a new sha256 once a draft shard is written again', async () => {
    const dataset = await createDataset('Rewritten Runs');
    await putShard(dataset.id, 'a/b.txt', 'first');
    expect((await t.request('GET', `/v1/datasets/${dataset.id}/shards`, { key: owner.key })).body.items[0].sha256).toBe(sha256('first'));
    await putShard(dataset.id, 'a/b.txt', 'second', true);
    expect((await t.request('GET', `/v1/datasets/${dataset.id}/shards`, { key: owner.key })).body.items[0].sha256).toBe(sha256('second'));
  });

  itOnLocalStore(`binds a model upload to its sha256 too${onLocal}`, async () => {
    const grant = await t.request('POST', '/v1/uploads', { key: owner.key, body: { file_name: 'policy.onnx', file_size: 4, sha256: sha256('onnx') } });
    expect(grant.status).toBe(200);
    expect(grant.body.sha256).toBe(sha256('onnx'));
    expect((await t.storage('PUT', grant.body.upload_url, { payload: 'ONNX' })).body.error.code).toBe('checksum_mismatch');
    expect((await t.request('PUT', '/v1/uploads', { key: owner.key, body: { storage_path: grant.body.storage_path } })).body.exists).toBe(false);
    expect((await t.storage('PUT', grant.body.upload_url, { payload: 'onnx' })).status).toBe(200);
  });

  it('lists the robotics file types in GET /v1/uploads and grants them', async () => {
    const limits = await t.request('GET', '/v1/uploads', { key: owner.key });
    expect(limits.body.extensions).toEqual(expect.arrayContaining(['.mp4', '.webm', '.mkv', '.tfrecord', '.npy', '.md', '.txt', '.xml', '.sdf', '.mjcf', '.arrow', '.feather', '.msgpack']));
    for (const file_name of ['episode.mp4', 'README.md', 'package.xml', 'world.sdf', 'train.tfrecord', 'obs.npy']) {
      expect([file_name, (await t.request('POST', '/v1/uploads', { key: owner.key, body: { file_name, file_size: 3 } })).status]).toEqual([file_name, 200]);
    }
  });

  it('lists a paid dataset to a buyer who has not paid but never gives them a shard URL', async () => {
    const dataset = await createDataset('Paid Folders', 1500);
    await putShard(dataset.id, 'data/chunk-000/episode_000000.parquet', episode0);
    await t.request('POST', `/v1/datasets/${dataset.id}/publish`, { key: owner.key });
    const list = await t.request('GET', `/v1/datasets/${dataset.id}/shards`, { key: reader.key });
    expect(list.body.items).toEqual([{ name: 'data/chunk-000/episode_000000.parquet', size: episode0.length, sha256: sha256(episode0) }]);
    for (const path of ['data/chunk-000/episode_000000.parquet', 'data%2Fchunk-000%2Fepisode_000000.parquet']) {
      const res = await t.request('GET', `/v1/datasets/${dataset.id}/shards/${path}`, { key: reader.key });
      expect([res.status, res.body.error.code, res.body.url]).toEqual([402, 'purchase_required', undefined]);
    }
    const buyer = await t.accountWithKey({ scopes: ['datasets:read'] });
    await buy(t, buyer.key, dataset.slug);
    expect((await t.request('GET', `/v1/datasets/${dataset.id}/shards/data/chunk-000/episode_000000.parquet`, { key: buyer.key })).status).toBe(200);
  });
});
