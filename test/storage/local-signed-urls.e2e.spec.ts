import * as fs from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { BLOB_STORE, BlobStore } from '../../src/storage/blob-store';
import { blobsOfMode } from '../../src/storage/mode-staging';
import { startTestApp, TestApp } from '../support/app';

const local = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};

describe('local blob store signed URLs', () => {
  let t: TestApp;
  let key: string;
  let accountId: string;
  let store: BlobStore;

  beforeAll(async () => {
    t = await startTestApp({ localStore: true });
    ({ key, accountId } = await t.accountWithKey({ scopes: ['models:upload'] }));
    // The service's own view of a test-mode key's files.
    store = blobsOfMode(t.app.get(BLOB_STORE), 'test');
  });
  afterAll(() => t.close());

  const grant = async (fileName: string, fileSize: number) => {
    const res = await t.request('POST', '/v1/uploads', { key, body: { file_name: fileName, file_size: fileSize } });
    expect(res.status).toBe(200);
    return res.body;
  };
  const exists = (storagePath: string) => t.request('PUT', '/v1/uploads', { key, body: { storage_path: storagePath } });
  const incomingFiles = () => fs.readdirSync(path.join(t.dataDir, 'blobs', '.incoming'));

  it('takes raw bytes of any content type, then serves them whole and by range', async () => {
    const g = await grant('policy.onnx', 10);
    const put = await t.request('PUT', local(g.upload_url), { payload: '0123456789', headers: { 'content-type': 'text/plain' } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ storage_path: g.storage_path, size: 10 });
    expect((await exists(g.storage_path)).body).toEqual({ exists: true, size: 10 });

    const url = local(await store.signDownload(g.storage_path, { expiresIn: 120, fileName: 'policy.onnx' }));
    const whole = await t.request('GET', url);
    expect(whole.status).toBe(200);
    expect(whole.text).toBe('0123456789');
    const part = await t.request('GET', url, { headers: { range: 'bytes=2-5' } });
    expect(part.status).toBe(206);
    expect(part.text).toBe('2345');
    expect(part.headers['content-range']).toBe('bytes 2-5/10');
    const tail = await t.request('GET', url, { headers: { range: 'bytes=-3' } });
    expect(tail.text).toBe('789');
    const outside = await t.request('GET', url, { headers: { range: 'bytes=50-' } });
    expect(outside.status).toBe(416);
  });

  it('serves a download under the file name it was signed for, and refuses another name', async () => {
    const g = await grant('named.onnx', 3);
    await t.request('PUT', local(g.upload_url), { payload: 'abc' });
    const frozen = await store.freeze(g.storage_path);
    const url = new URL(await store.signDownload(frozen!.path, { expiresIn: 120, fileName: 'grasp "v2".onnx' }));
    const res = await t.request('GET', local(url.toString()));
    expect(res.text).toBe('abc');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="grasp _v2_.onnx"; filename*=UTF-8''grasp%20%22v2%22.onnx`);
    url.searchParams.set('file_name', 'other.exe');
    expect((await t.request('GET', local(url.toString()))).status).toBe(403);
  });

  it('refuses a tampered signature, path, size cap or method with 403 and stores nothing', async () => {
    const g = await grant('tamper.onnx', 10);
    const u = new URL(g.upload_url);
    const sig = u.searchParams.get('signature')!;
    const variants: string[] = [];
    const flipped = new URL(u);
    flipped.searchParams.set('signature', `${sig[0] === 'a' ? 'b' : 'a'}${sig.slice(1)}`);
    variants.push(local(flipped.toString()));
    const bigger = new URL(u);
    bigger.searchParams.set('max_bytes', '999999');
    variants.push(local(bigger.toString()));
    const later = new URL(u);
    later.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 3600));
    variants.push(local(later.toString()));
    variants.push(local(g.upload_url).replace('tamper.onnx', 'other.onnx'));
    for (const url of variants) {
      const res = await t.request('PUT', url, { payload: '0123456789' });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
    }
    // An upload URL does not read, and a GET URL does not write.
    expect((await t.request('GET', local(g.upload_url))).status).toBe(403);
    const download = await store.signDownload(g.storage_path, { expiresIn: 120, fileName: 'x' });
    expect((await t.request('PUT', local(download), { payload: 'x' })).status).toBe(403);
    expect((await exists(g.storage_path)).body).toEqual({ exists: false, size: 0 });
  });

  it('refuses an expired URL with 403', async () => {
    const storagePath = `user/${accountId}/1-expired.onnx`;
    const expired = await store.signUpload(storagePath, { expiresIn: -1, maxBytes: 10 });
    const res = await t.request('PUT', local(expired.url), { payload: 'abc' });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toMatch(/expired/);
    expect((await exists(storagePath)).body).toEqual({ exists: false, size: 0 });
  });

  it('stops a body larger than the cap while streaming and leaves nothing behind', async () => {
    const g = await grant('big.onnx', 1000);
    // No content-length: the cap can only be enforced by counting the streamed bytes.
    const chunks = Array.from({ length: 20 }, () => Buffer.alloc(100, 1));
    const res = await t.app.getHttpAdapter().getInstance().inject({
      method: 'PUT',
      url: local(g.upload_url),
      payload: Readable.from(chunks),
      headers: { 'content-type': 'application/octet-stream' },
    });
    expect(res.statusCode).toBe(413);
    expect(JSON.parse(res.body).error.code).toBe('payload_too_large');
    expect((await exists(g.storage_path)).body).toEqual({ exists: false, size: 0 });
    expect(incomingFiles()).toEqual([]);
  });

  it('refuses a declared content-length over the cap before reading', async () => {
    const g = await grant('declared.onnx', 5);
    const res = await t.request('PUT', local(g.upload_url), { payload: '0123456789' });
    expect(res.status).toBe(413);
    expect((await exists(g.storage_path)).body).toEqual({ exists: false, size: 0 });
  });

  it('leaves JSON API routes answering 415 for other content types', async () => {
    const res = await t.request('POST', '/v1/uploads', { key, payload: 'file_name=a.onnx', headers: { 'content-type': 'text/plain' } });
    expect(res.status).toBe(415);
  });
});
