import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { startTestApp, TestApp } from '../support/app';

/** Over a real socket: the 413 must reach a client that is still sending, not a reset. */
describe('local signed PUT over HTTP', () => {
  let t: TestApp;
  let origin: string;
  let key: string;

  beforeAll(async () => {
    t = await startTestApp({ localStore: true });
    await t.app.listen(0, '127.0.0.1');
    origin = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    ({ key } = await t.accountWithKey());
  });
  afterAll(() => t.close());

  /** Streams `total` bytes in 64 KiB chunks without a content-length (chunked). */
  const put = (url: string, total: number) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const u = new URL(url);
      const req = http.request(`${origin}${u.pathname}${u.search}`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' } });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      let sent = 0;
      const chunk = Buffer.alloc(64 * 1024, 7);
      Readable.from(
        (function* () {
          while (sent < total) {
            sent += chunk.length;
            yield chunk;
          }
        })(),
      )
        .on('error', reject)
        .pipe(req)
        // The server may close the socket after answering 413 while bytes are still in flight.
        .on('error', () => undefined);
    });

  it('answers 413 to an oversized chunked upload and stores nothing', async () => {
    const grant = await t.request('POST', '/v1/uploads', { key, body: { file_name: 'big.bag', file_size: 1024 * 1024 } });
    const res = await put(grant.body.upload_url, 8 * 1024 * 1024);
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body).error.code).toBe('payload_too_large');
    const check = await t.request('PUT', '/v1/uploads', { key, body: { storage_path: grant.body.storage_path } });
    expect(check.body).toEqual({ exists: false, size: 0 });
  });

  it('removes the temp file when the client goes away mid-body', async () => {
    const grant = await t.request('POST', '/v1/uploads', { key, body: { file_name: 'cut.bag', file_size: 4 * 1024 * 1024 } });
    const u = new URL(grant.body.upload_url);
    const req = http.request(`${origin}${u.pathname}${u.search}`, { method: 'PUT', headers: { 'content-length': 4 * 1024 * 1024 } });
    req.on('error', () => undefined);
    const incoming = path.join(t.dataDir, 'blobs', '.incoming');
    req.write(Buffer.alloc(256 * 1024, 7));
    // Cut the connection once the server has started the temp file.
    while (fs.readdirSync(incoming).length === 0) await new Promise((r) => setImmediate(r));
    req.destroy();
    while (fs.readdirSync(incoming).length > 0) await new Promise((r) => setImmediate(r));
    const check = await t.request('PUT', '/v1/uploads', { key, body: { storage_path: grant.body.storage_path } });
    expect(check.body).toEqual({ exists: false, size: 0 });
  });

  it('stores a chunked upload within the cap', async () => {
    const grant = await t.request('POST', '/v1/uploads', { key, body: { file_name: 'ok.bag', file_size: 1024 * 1024 } });
    const res = await put(grant.body.upload_url, 1024 * 1024);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ storage_path: grant.body.storage_path, size: 1024 * 1024 });
  });
});
