import { createHash } from 'node:crypto';
import { startTestApp, TestApp } from '../support/app';
import { startS3Server, S3TestServer } from '../storage/s3-server';
import { mcapFile, onnxModel } from '../support/asset-files';

/** The creator-to-buyer flow of the issue, on each storage adapter. */
describe.each(['local', 's3'] as const)('upload, publish, search and download on the %s store', (adapter) => {
  let t: TestApp;
  let s3: S3TestServer | undefined;

  beforeAll(async () => {
    s3 = adapter === 's3' ? await startS3Server() : undefined;
    t = await startTestApp({ env: s3?.env ?? {}, localStore: adapter === 'local' });
  });
  afterAll(async () => {
    await t.close();
    await s3?.close();
  });

  /** Signed URLs of the local store are answered by the app itself; S3's by the S3 server. */
  const storage = async (method: 'GET' | 'PUT', url: string, body?: Buffer) => {
    const res = await t.storage(method, url, { payload: body });
    return { status: res.status, bytes: res.bytes };
  };

  it('lets a creator publish an upload that a second account finds and downloads when free, or pays for', async () => {
    const creator = await t.accountWithKey({ name: 'Flow Robotics' });
    const buyer = await t.accountWithKey({ scopes: ['models:read'] });
    // A real model: published files are inspected with their format's reader (ranged reads on both stores).
    const content = onnxModel({ producer: 'weights '.repeat(64) });

    const grant = await t.request('POST', '/v1/uploads', { key: creator.key, body: { file_name: 'pick place.onnx', file_size: content.length } });
    expect(grant.status).toBe(200);
    expect((await storage('PUT', grant.body.upload_url, content)).status).toBe(200);
    const landed = await t.request('PUT', '/v1/uploads', { key: creator.key, body: { storage_path: grant.body.storage_path } });
    expect(landed.body).toEqual({ exists: true, size: content.length });

    const body = {
      title: 'Pick and Place Policy',
      description: 'Tabletop pick and place',
      type: 'onnx-model',
      license: 'Apache-2.0',
      tags: ['tabletop'],
      storage_path: grant.body.storage_path,
      file_name: grant.body.file_name,
      file_size: content.length,
      file_extension: grant.body.file_extension,
    };
    const free = await t.request('POST', '/v1/models', { key: creator.key, body });
    expect(free.status).toBe(201);
    const paid = await t.request('POST', '/v1/models', { key: creator.key, body: { ...body, title: 'Pick and Place Pro', price_cents: 9900 } });
    expect(paid.status).toBe(201);

    const found = await t.request('GET', '/v1/models?q=tabletop%20pick', { key: buyer.key });
    expect(found.body.items.map((m: any) => m.id).sort()).toEqual([free.body.id, paid.body.id].sort());

    const download = await t.request('POST', `/v1/models/${free.body.slug}/download`, { key: buyer.key });
    expect(download.status).toBe(200);
    expect(download.body).toMatchObject({ expires_in: 120, file_name: 'pick-place.onnx', file_size: content.length });
    expect(await storage('GET', download.body.url)).toEqual({ status: 200, bytes: content });
    expect(free.body.inspection).toMatchObject({ format: 'onnx', inputs: [{ name: 'obs', elem_type: 'float', shape: ['batch', 4] }], onnxruntime: 'loads' });
    expect((await t.request('GET', `/v1/models/${free.body.id}`, { key: buyer.key })).body.downloads).toBe(1);

    const refused = await t.request('POST', `/v1/models/${paid.body.id}/download`, { key: buyer.key });
    expect(refused.status).toBe(402);
    expect(refused.body.error).toMatchObject({ code: 'purchase_required', price: { amount: 9900, currency: 'usd' } });
  });

  it('publishes a dataset once a shard landed and lists what actually landed', async () => {
    const owner = await t.accountWithKey();
    const dataset = await t.request('POST', '/v1/datasets', { key: owner.key, body: { title: 'Flow Telemetry', type: 'telemetry' } });
    const run = mcapFile('flow');
    const minted = await t.request('POST', `/v1/datasets/${dataset.body.id}/shards`, { key: owner.key, body: { name: 'run-1.mcap', size: run.length } });
    expect((await storage('PUT', minted.body.upload_url, run)).status).toBe(200);
    await t.request('POST', `/v1/datasets/${dataset.body.id}/shards`, { key: owner.key, body: { name: 'run-2.mcap', size: 5 } });
    expect((await t.request('GET', `/v1/datasets/${dataset.body.id}/shards`, { key: owner.key })).body).toEqual({
      items: [{ name: 'run-1.mcap', size: run.length, sha256: createHash('sha256').update(run).digest('hex') }],
      count: 1,
      total_bytes: run.length,
    });
    expect((await t.request('POST', `/v1/datasets/${dataset.body.id}/publish`, { key: owner.key })).body.status).toBe('published');
    const reader = await t.accountWithKey({ scopes: ['datasets:read'] });
    const shard = await t.request('GET', `/v1/datasets/${dataset.body.slug}/shards/run-1.mcap`, { key: reader.key });
    expect(await storage('GET', shard.body.url)).toEqual({ status: 200, bytes: run });
  });
});
