import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadSettings } from '../../src/config/settings';
import { S3BlobStore } from '../../src/storage/s3-blob-store';
import { startTestApp, TestApp } from '../support/app';
import { EXTERNAL_S3_SKIP_REASON, onExternalS3, s3ClientFor, startS3Server, S3TestServer } from './s3-server';

/** Date only: the service signs in the past, the S3 server and the sockets keep real time. */
const FAKE_ONLY_DATE = ['hrtime', 'nextTick', 'performance', 'queueMicrotask', 'requestAnimationFrame', 'cancelAnimationFrame',
  'requestIdleCallback', 'cancelIdleCallback', 'setImmediate', 'clearImmediate', 'setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'] as const;

/** An S3 error document (not the service's JSON envelope): the refusal came from the S3 server. */
const S3_REFUSAL = /^<\?xml[\s\S]*<Error>\s*<Code>(SignatureDoesNotMatch|AccessDenied|RequestExpired|RequestTimeTooSkewed)<\/Code>/;

/** What the URL signs, checked offline: presigning needs no server. */
describe('S3 upload URLs sign their terms', () => {
  const store = S3BlobStore.fromSettings(
    loadSettings({
      DATA_DIR: os.tmpdir(), S3_BUCKET: 'b', S3_ENDPOINT: 'http://127.0.0.1:9', S3_FORCE_PATH_STYLE: 'true', AWS_ACCESS_KEY_ID: 'k', AWS_SECRET_ACCESS_KEY: 's',
    }).s3!,
  );
  const signedHeaders = async (options: { contentType?: string }) =>
    new URL((await store.signUpload('user/acct_s/1-a.onnx', { expiresIn: 60, maxBytes: 10, ...options })).url).searchParams.get('X-Amz-SignedHeaders');

  it('signs content-length always and content-type when one is fixed, so the S3 server checks them', async () => {
    expect(await signedHeaders({})).toBe('content-length;host');
    expect(await signedHeaders({ contentType: 'application/x-mcap' })).toBe('content-length;content-type;host');
  });

  // Issue 41. Hoisted into the query string (the presigner's default for x-amz-* headers), S3
  // would not check the checksum at all (aws-sdk-js-v3 #3906): it must stay a signed header.
  it('binds a sha256 as a signed x-amz-checksum-sha256 header the PUT must send, not as a query parameter', async () => {
    const hex = createHash('sha256').update('bytes').digest('hex');
    const signed = await store.signUpload('user/acct_s/datasets/lst_1/data/a.parquet', { expiresIn: 60, maxBytes: 5, sha256: hex });
    const url = new URL(signed.url);
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('content-length;host;x-amz-checksum-sha256');
    expect([...url.searchParams.keys()].filter((k) => /checksum/i.test(k))).toEqual([]);
    expect(signed.headers).toEqual({ 'x-amz-checksum-sha256': Buffer.from(hex, 'hex').toString('base64') });
  });
});

/**
 * Issue 43: S3_PUBLIC_ENDPOINT. In a compose stack the service reaches the server as
 * http://minio:9000, which a client on the host cannot resolve: the URLs handed out are signed
 * for the public address (the host is part of the signature), and only those.
 */
describe('S3 URLs handed to clients are signed for S3_PUBLIC_ENDPOINT', () => {
  const settingsWith = (env: Record<string, string>) =>
    loadSettings({ DATA_DIR: os.tmpdir(), S3_BUCKET: 'b', S3_ENDPOINT: 'http://minio:9000', S3_FORCE_PATH_STYLE: 'true', AWS_ACCESS_KEY_ID: 'k', AWS_SECRET_ACCESS_KEY: 's', ...env });

  it('signs upload, part and download URLs for the public address; without the setting, for S3_ENDPOINT', async () => {
    const store = S3BlobStore.fromSettings(settingsWith({ S3_PUBLIC_ENDPOINT: 'https://files.example.com' }).s3!);
    const upload = new URL((await store.signUpload('user/acct_s/1-a.onnx', { expiresIn: 60, maxBytes: 10 })).url);
    const part = new URL(await store.signPart('user/acct_s/1-b.onnx', 'upload-1', { partNumber: 1, size: 10 }, { expiresIn: 60 }));
    const download = new URL(await store.signDownload('user/acct_s/1-a.onnx', { expiresIn: 60, fileName: 'a.onnx' }));
    expect([upload.origin, part.origin, download.origin]).toEqual(['https://files.example.com', 'https://files.example.com', 'https://files.example.com']);
    expect(upload.pathname).toBe('/b/user/acct_s/1-a.onnx');

    const internal = S3BlobStore.fromSettings(settingsWith({}).s3!);
    expect(new URL((await internal.signUpload('user/acct_s/1-a.onnx', { expiresIn: 60, maxBytes: 10 })).url).origin).toBe('http://minio:9000');
  });

  it('is refused without a bucket, as S3_ENDPOINT is', () => {
    expect(() => loadSettings({ DATA_DIR: os.tmpdir(), S3_PUBLIC_ENDPOINT: 'http://localhost:9000' })).toThrow('S3_PUBLIC_ENDPOINT is set but S3_BUCKET is not');
  });
});

/**
 * Presigned uploads held to their terms by the S3 server itself, not only noticed at publish:
 * the grant's size and (where fixed) content type are signed, and the URL expires. Only on a
 * signature-checking server (s3rver checks no signature): the S3 pass of .ci/run.
 */
(onExternalS3 ? describe : describe.skip)(`presigned uploads refused by the S3 server${onExternalS3 ? '' : ` (${EXTERNAL_S3_SKIP_REASON})`}`, () => {
  let t: Awaited<ReturnType<typeof startTestApp>>;
  let creator: { accountId: string; key: string };

  beforeAll(async () => {
    t = await startTestApp();
    creator = await t.accountWithKey({ scopes: ['models:upload', 'datasets:upload'] });
  });
  afterAll(() => t.close());

  /** Names differ per test: a storage path is the account, the second and the name. */
  const grant = async (fileName: string, fileSize: number) => {
    const res = await t.request('POST', '/v1/uploads', { key: creator.key, body: { file_name: fileName, file_size: fileSize } });
    expect(res.status).toBe(200);
    return res.body as { storage_path: string; upload_url: string };
  };
  const landed = async (storagePath: string) => (await t.request('PUT', '/v1/uploads', { key: creator.key, body: { storage_path: storagePath } })).body;
  const put = async (url: string, body: string | Uint8Array, headers: Record<string, string> = {}) => {
    const res = await fetch(url, { method: 'PUT', body, headers });
    return { status: res.status, text: await res.text() };
  };

  it('signs the granted size: a PUT of more or fewer bytes gets 403 from S3 and stores nothing, the granted size lands', async () => {
    const g = await grant('sized.onnx', 10);
    expect(new URL(g.upload_url).searchParams.get('X-Amz-SignedHeaders')).toBe('content-length;host');
    for (const body of ['0123456789A', '012345678', '0123456789'.repeat(100)]) {
      const refused = await put(g.upload_url, body);
      expect({ bytes: body.length, status: refused.status }).toEqual({ bytes: body.length, status: 403 });
      expect(refused.text).toMatch(S3_REFUSAL);
    }
    expect(await landed(g.storage_path)).toEqual({ exists: false, size: 0 });
    expect((await put(g.upload_url, '0123456789')).status).toBe(200);
    expect(await landed(g.storage_path)).toEqual({ exists: true, size: 10 });
  });

  it("signs a shard's declared size the same way", async () => {
    const dataset = await t.request('POST', '/v1/datasets', { key: creator.key, body: { title: 'Signed Shards' } });
    const minted = await t.request('POST', `/v1/datasets/${dataset.body.id}/shards`, { key: creator.key, body: { name: 'run.mcap', size: 4 } });
    const refused = await put(minted.body.upload_url, 'runs!');
    expect(refused.status).toBe(403);
    expect(refused.text).toMatch(S3_REFUSAL);
    expect((await t.request('GET', `/v1/datasets/${dataset.body.id}/shards`, { key: creator.key })).body.count).toBe(0);
  });

  /**
   * Issue 41: a shard minted with its sha256. The checksum header is signed, so a PUT without
   * it or with another value is refused by the signature check on any S3 server; a gateway
   * that verifies checksums (AWS, MinIO, Ceph RGW from Squid) also refuses other bytes sent
   * under the right header (400 BadDigest). Whether this gateway verifies is read from what it
   * stores: a checksum it kept for the right bytes (HeadObject with ChecksumMode).
   */
  it('binds a shard to its sha256: the header is signed, and a verifying gateway refuses other bytes', async () => {
    const dataset = await t.request('POST', '/v1/datasets', { key: creator.key, body: { title: 'Checked Shards' } });
    const hex = createHash('sha256').update('right').digest('hex');
    const minted = await t.request('POST', `/v1/datasets/${dataset.body.id}/shards`, { key: creator.key, body: { name: 'data/chunk-000/a.parquet', size: 5, sha256: hex } });
    expect(minted.status).toBe(200);
    const header = minted.body.upload_headers as Record<string, string>;
    expect(header).toEqual({ 'x-amz-checksum-sha256': Buffer.from(hex, 'hex').toString('base64') });
    const list = async () => (await t.request('GET', `/v1/datasets/${dataset.body.id}/shards`, { key: creator.key })).body;

    const noHeader = await put(minted.body.upload_url, 'right');
    expect(noHeader.status).toBe(403);
    const otherValue = await put(minted.body.upload_url, 'wrong', { 'x-amz-checksum-sha256': createHash('sha256').update('wrong').digest('base64') });
    expect(otherValue.status).toBe(403);
    expect((await list()).count).toBe(0);

    const settings = t.s3!;
    const client = s3ClientFor(settings);
    const wrong = await put(minted.body.upload_url, 'wrong', header);
    if (wrong.status === 200) {
      // A gateway that does not verify checksums kept the bytes: it must also have kept no checksum.
      const head = await client.send(new HeadObjectCommand({ Bucket: settings.bucket, Key: `test/${minted.body.storage_path}`, ChecksumMode: 'ENABLED' }));
      expect(head.ChecksumSHA256).toBeUndefined();
      console.warn('this S3 gateway does not verify x-amz-checksum-sha256 (Ceph RGW before Squid): the sha256 listed is computed from what landed');
      expect((await list()).items).toEqual([{ name: 'data/chunk-000/a.parquet', size: 5, sha256: createHash('sha256').update('wrong').digest('hex') }]);
    } else {
      expect(wrong.status).toBe(400);
      expect(wrong.text).toMatch(/<Code>(BadDigest|XAmzContentChecksumMismatch|InvalidRequest)<\/Code>/);
      expect((await list()).count).toBe(0);
    }
    expect((await put(minted.body.upload_url, 'right', header)).status).toBe(200);
    expect((await list()).items).toEqual([{ name: 'data/chunk-000/a.parquet', size: 5, sha256: hex }]);
  });

  // The gateway reached under two names (127.0.0.1 by the service, localhost by the client):
  // a URL signed for the public one lands there; the service still reads through its own.
  it('hands out URLs for S3_PUBLIC_ENDPOINT that the server accepts, and reads what landed through S3_ENDPOINT', async () => {
    const internal = new URL(t.s3!.endpoint!);
    const publicEndpoint = `${internal.protocol}//localhost:${internal.port}`;
    const behindProxy = await startTestApp({ shared: t.database, env: { S3_PUBLIC_ENDPOINT: publicEndpoint } });
    try {
      const res = await behindProxy.request('POST', '/v1/uploads', { key: creator.key, body: { file_name: 'public.onnx', file_size: 10 } });
      expect(new URL(res.body.upload_url).origin).toBe(publicEndpoint);
      expect((await put(res.body.upload_url, '0123456789')).status).toBe(200);
      expect((await behindProxy.request('PUT', '/v1/uploads', { key: creator.key, body: { storage_path: res.body.storage_path } })).body).toEqual({ exists: true, size: 10 });
    } finally {
      await behindProxy.close();
    }
  });

  it('refuses an expired grant with 403 and stores nothing', async () => {
    jest.useFakeTimers({ now: Date.now() - 2 * 3600 * 1000, doNotFake: [...FAKE_ONLY_DATE] });
    let g;
    try {
      g = await grant('expired.onnx', 3);
    } finally {
      jest.useRealTimers();
    }
    const refused = await put(g.upload_url, 'abc');
    expect(refused.status).toBe(403);
    expect(refused.text).toMatch(S3_REFUSAL);
    expect(await landed(g.storage_path)).toEqual({ exists: false, size: 0 });
  });

  it('refuses a grant re-pointed at another key, or with its signature changed', async () => {
    const g = await grant('pointed.onnx', 3);
    const other = new URL(g.upload_url);
    other.pathname = other.pathname.replace(/pointed\.onnx$/, 'other.onnx');
    expect(other.pathname).toMatch(/-other\.onnx$/);
    const tampered = new URL(g.upload_url);
    const signature = tampered.searchParams.get('X-Amz-Signature')!;
    tampered.searchParams.set('X-Amz-Signature', `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`);
    for (const url of [other.toString(), tampered.toString()]) {
      const refused = await put(url, 'abc');
      expect(refused.status).toBe(403);
      expect(refused.text).toMatch(S3_REFUSAL);
    }
    expect(await landed(g.storage_path)).toEqual({ exists: false, size: 0 });
  });
});

/** S3BlobStore.signUpload with a fixed content type (no grant of the API fixes one yet). */
(onExternalS3 ? describe : describe.skip)(`a presigned PUT with a fixed content type${onExternalS3 ? '' : ` (${EXTERNAL_S3_SKIP_REASON})`}`, () => {
  let s3: S3TestServer;
  let store: S3BlobStore;

  beforeAll(async () => {
    s3 = await startS3Server();
    store = S3BlobStore.fromSettings(loadSettings({ DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'svc-s3-')), ...s3.env }).s3!);
  });
  afterAll(() => s3.close());

  it('is refused by S3 with another content type or none, and stores the object with the signed one', async () => {
    const key = 'user/acct_t/1-run.mcap';
    const signed = await store.signUpload(key, { expiresIn: 60, maxBytes: 4, contentType: 'application/x-mcap' });
    expect(new URL(signed.url).searchParams.get('X-Amz-SignedHeaders')).toBe('content-length;content-type;host');
    for (const headers of [{ 'content-type': 'application/octet-stream' }, {}] as Record<string, string>[]) {
      const res = await fetch(signed.url, { method: 'PUT', body: new Uint8Array([1, 2, 3, 4]), headers });
      expect(res.status).toBe(403);
      expect(await res.text()).toMatch(S3_REFUSAL);
    }
    expect(await store.stat(key)).toBeUndefined();
    expect((await fetch(signed.url, { method: 'PUT', body: new Uint8Array([1, 2, 3, 4]), headers: { 'content-type': 'application/x-mcap' } })).status).toBe(200);
    const settings = loadSettings({ DATA_DIR: os.tmpdir(), ...s3.env }).s3!;
    const head = await s3ClientFor(settings).send(new HeadObjectCommand({ Bucket: settings.bucket, Key: key }));
    expect({ size: head.ContentLength, type: head.ContentType }).toEqual({ size: 4, type: 'application/x-mcap' });
  });
});
