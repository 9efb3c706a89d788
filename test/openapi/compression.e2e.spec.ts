import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import * as zlib from 'node:zlib';
import { startTestApp, TestApp } from '../support/app';
import { onnxModel } from '../support/asset-files';

/** A raw HTTP answer: headers and the bytes as sent (no client-side decompression). */
interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  bytes: Buffer;
}

/** Issue 42: the OpenAPI document names PUBLIC_BASE_URL, and answers are compressed over a real socket. */
describe('OpenAPI servers and response compression (issue 42)', () => {
  const PUBLIC = 'https://api.robots.example';
  let t: TestApp;
  let port: number;
  let key: string;

  beforeAll(async () => {
    t = await startTestApp({ env: { PUBLIC_BASE_URL: PUBLIC } });
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
    ({ key } = await t.accountWithKey({ tier: 'premium' }));
  });
  afterAll(() => t.close());

  function send(method: string, path: string, headers: Record<string, string> = {}, body?: Buffer | string): Promise<Raw> {
    return new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (part: Buffer) => parts.push(part));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, bytes: Buffer.concat(parts) }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  }
  const auth = () => ({ authorization: `Bearer ${key}` });

  it('names the configured PUBLIC_BASE_URL in servers', async () => {
    const res = await send('GET', '/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.bytes.toString()).servers).toEqual([{ url: PUBLIC, description: 'This service' }]);
  });

  it('sends the document gzip- or br-compressed when asked, the same JSON, and plain when not', async () => {
    const plain = await send('GET', '/v1/openapi.json');
    expect(plain.headers['content-encoding']).toBeUndefined();
    const json = plain.bytes.toString();
    expect(JSON.parse(json).openapi).toBe('3.1.0');

    const gzip = await send('GET', '/v1/openapi.json', { 'accept-encoding': 'gzip' });
    expect(gzip.status).toBe(200);
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gzip.headers.vary).toMatch(/accept-encoding/i);
    expect(gzip.headers['content-type']).toMatch(/^application\/json/);
    expect(gzip.bytes.length).toBeLessThan(json.length / 4);
    expect(zlib.gunzipSync(gzip.bytes).toString()).toBe(json);

    const br = await send('GET', '/v1/openapi.json', { 'accept-encoding': 'br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(zlib.brotliDecompressSync(br.bytes).toString()).toBe(json);

    // A browser's usual header: br preferred.
    const both = await send('GET', '/v1/openapi.json', { 'accept-encoding': 'gzip, deflate, br' });
    expect(['br', 'gzip']).toContain(both.headers['content-encoding']);
    // An encoding we do not offer: plain.
    const identity = await send('GET', '/v1/openapi.json', { 'accept-encoding': 'identity' });
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.bytes.toString()).toBe(json);
  });

  it('leaves small answers (under 1 KiB) uncompressed', async () => {
    const me = await send('GET', '/v1/me', { ...auth(), 'accept-encoding': 'gzip, br' });
    expect(me.status).toBe(200);
    expect(me.bytes.length).toBeLessThan(1024);
    expect(me.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(me.bytes.toString()).key.tier).toBe('premium');
  });

  it('never compresses a streamed chat completion: plain server-sent events to the end', async () => {
    const body = JSON.stringify({ model: 'svc-fast-8b', messages: [{ role: 'user', content: 'Describe a six-axis arm in detail, joint by joint.' }], stream: true });
    const res = await send('POST', '/v1/chat/completions', { ...auth(), 'content-type': 'application/json', 'accept-encoding': 'gzip, br' }, body);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(res.headers['content-encoding']).toBeUndefined();
    const events = res.bytes.toString().split('\n\n').filter(Boolean);
    expect(events.length).toBeGreaterThan(2);
    expect(events.at(-1)).toBe('data: [DONE]');
    for (const event of events.slice(0, -1)) expect(JSON.parse(event.replace(/^data: /, '')).object).toBe('chat.completion.chunk');
  });

  it('uploads and downloads files byte for byte when the client accepts compression', async () => {
    const file = onnxModel();
    const grant = await send('POST', '/v1/uploads', { ...auth(), 'content-type': 'application/json', 'accept-encoding': 'gzip, br' }, JSON.stringify({ file_name: 'policy.onnx', file_size: file.length }));
    expect(grant.status).toBe(200);
    const { upload_url: uploadUrl, storage_path: storagePath } = JSON.parse(zlibAware(grant).toString());
    // The signed URL names the public address; the same path is sent to the test server.
    const target = new URL(uploadUrl);
    const put = await send('PUT', target.pathname + target.search, { 'content-type': 'application/octet-stream', 'accept-encoding': 'gzip, br' }, file);
    expect(put.status).toBeLessThan(300);
    const check = await send('PUT', '/v1/uploads', { ...auth(), 'content-type': 'application/json' }, JSON.stringify({ storage_path: storagePath }));
    expect(JSON.parse(check.bytes.toString())).toEqual({ exists: true, size: file.length });

    const model = await send(
      'POST',
      '/v1/models',
      { ...auth(), 'content-type': 'application/json', 'accept-encoding': 'gzip, br' },
      JSON.stringify({ title: 'Compressed answers', type: 'onnx-model', license: 'MIT', storage_path: storagePath, file_name: 'policy.onnx', file_size: file.length }),
    );
    expect(model.status).toBe(201);
    const slug = JSON.parse(zlibAware(model).toString()).slug;
    const download = await send('POST', `/v1/models/${slug}/download`, { ...auth(), 'accept-encoding': 'gzip, br' });
    expect(download.status).toBe(200);
    const url = new URL(JSON.parse(zlibAware(download).toString()).url);
    const got = await send('GET', url.pathname + url.search, { 'accept-encoding': 'gzip, br' });
    expect(got.status).toBe(200);
    // A file goes as stored: not re-encoded, so its sha256 and byte ranges hold.
    expect(got.headers['content-encoding']).toBeUndefined();
    expect(got.bytes.equals(file)).toBe(true);
  });

  it('serves the console and the API reference page compressed or not, the same page', async () => {
    for (const path of ['/console', '/docs', '/docs/swagger-ui.css']) {
      const plain = await send('GET', path);
      const gzip = await send('GET', path, { 'accept-encoding': 'gzip' });
      expect({ path, status: gzip.status }).toEqual({ path, status: plain.status });
      expect({ path, body: zlibAware(gzip).toString() }).toEqual({ path, body: plain.bytes.toString() });
    }
    // The Swagger UI stylesheet (about 150 KB) is sent compressed.
    expect((await send('GET', '/docs/swagger-ui.css', { 'accept-encoding': 'gzip' })).headers['content-encoding']).toBe('gzip');
  });
});

/** The body as the server meant it, whichever encoding it chose. */
function zlibAware(res: Raw): Buffer {
  const encoding = res.headers['content-encoding'];
  if (encoding === 'gzip') return zlib.gunzipSync(res.bytes);
  if (encoding === 'br') return zlib.brotliDecompressSync(res.bytes);
  expect(encoding).toBeUndefined();
  return res.bytes;
}
