import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadSettings } from '../../src/config/settings';
import { BlobStore } from '../../src/storage/blob-store';
import { S3BlobStore } from '../../src/storage/s3-blob-store';
import { startS3Server, S3TestServer } from './s3-server';

/** The S3 adapter against s3rver (the RADOS Gateway in the S3 pass): signed PUT and GET, HeadObject sizes, ListObjectsV2 prefixes. */
describe('S3BlobStore on an S3-protocol server', () => {
  let s3: S3TestServer;
  let store: BlobStore;

  beforeAll(async () => {
    s3 = await startS3Server();
    store = S3BlobStore.fromSettings(loadSettings({ DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'svc-s3-')), ...s3.env }).s3!);
  });
  afterAll(() => s3.close());

  it('uploads through a presigned PUT and serves the object through a presigned GET with Range', async () => {
    const signed = await store.signUpload('user/acct_a/1-model.onnx', { expiresIn: 3600, maxBytes: 10 });
    const put = await fetch(signed.url, { method: 'PUT', body: '0123456789', headers: { 'content-length': '10' } });
    expect(put.status).toBe(200);
    expect(await store.stat('user/acct_a/1-model.onnx')).toEqual({ path: 'user/acct_a/1-model.onnx', size: 10, version: expect.any(String) });
    const url = await store.signDownload('user/acct_a/1-model.onnx', { expiresIn: 120, fileName: 'model.onnx' });
    expect(await (await fetch(url)).text()).toBe('0123456789');
    const part = await fetch(url, { headers: { range: 'bytes=3-5' } });
    expect(part.status).toBe(206);
    expect(await part.text()).toBe('345');
  });

  it('reports missing objects as absent and lists by prefix with sizes', async () => {
    expect(await store.stat('user/acct_a/nothing.onnx')).toBeUndefined();
    for (const [name, body] of [['b.csv', 'bb'], ['a.csv', 'a'], ['c.csv', 'ccc']]) {
      const signed = await store.signUpload(`user/acct_b/datasets/lst_1/${name}`, { expiresIn: 60, maxBytes: body.length });
      expect((await fetch(signed.url, { method: 'PUT', body })).status).toBe(200);
    }
    expect(await store.list('user/acct_b/datasets/lst_1/')).toEqual([
      { path: 'user/acct_b/datasets/lst_1/a.csv', size: 1, version: expect.any(String) },
      { path: 'user/acct_b/datasets/lst_1/b.csv', size: 2, version: expect.any(String) },
      { path: 'user/acct_b/datasets/lst_1/c.csv', size: 3, version: expect.any(String) },
    ]);
    expect(await store.list('user/acct_b/datasets/lst_2/')).toEqual([]);
  });

  // Issue 41: keys with folders, and the digest a draft shard's sha256 comes from.
  it('keeps folders in keys, lists them under the prefix, and digests an object with the version it read', async () => {
    const key = 'user/acct_d/datasets/lst_9/data/chunk-000/episode_000000.parquet';
    const signed = await store.signUpload(key, { expiresIn: 60, maxBytes: 4 });
    expect((await fetch(signed.url, { method: 'PUT', body: 'PAR1' })).status).toBe(200);
    const [listed] = await store.list('user/acct_d/datasets/lst_9/data/');
    expect(listed).toEqual({ path: key, size: 4, version: expect.any(String) });
    expect(await store.digest(key)).toEqual({ path: key, size: 4, sha256: createHash('sha256').update('PAR1').digest('hex'), version: listed.version });
    expect(await store.digest('user/acct_d/datasets/lst_9/missing.parquet')).toBeUndefined();
  });

  // s3rver checks a presigned URL's expiry but not its signature: tampering with an S3 URL is
  // covered in the S3 pass (s3-presigned.e2e.spec.ts), on a server that checks both.
  it('refuses an expired presigned URL with 403 and stores nothing', async () => {
    const FAKE_ONLY_DATE = ['hrtime', 'nextTick', 'performance', 'queueMicrotask', 'requestAnimationFrame', 'cancelAnimationFrame',
      'requestIdleCallback', 'cancelIdleCallback', 'setImmediate', 'clearImmediate', 'setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'] as const;
    jest.useFakeTimers({ now: Date.now() - 2 * 3600 * 1000, doNotFake: [...FAKE_ONLY_DATE] });
    let signed;
    try {
      signed = await store.signUpload('user/acct_c/1-z.onnx', { expiresIn: 3600, maxBytes: 3 });
    } finally {
      jest.useRealTimers();
    }
    expect((await fetch(signed.url, { method: 'PUT', body: 'abc' })).status).toBe(403);
    expect(await store.stat('user/acct_c/1-z.onnx')).toBeUndefined();
  });
});
