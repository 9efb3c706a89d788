import { CopyObjectCommand, S3Client } from '@aws-sdk/client-s3';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { modelBody } from '../catalog/catalog-client';
import { startTestApp, TestApp } from '../support/app';
import { recordedOfType } from '../support/events';
import { startS3Server, S3TestServer } from './s3-server';
import { onnxModel } from '../support/asset-files';

/**
 * A TCP relay in front of the S3 server that can be stopped and started again on the same
 * port: the service sees its S3 server go away (connections reset, then refused) and come
 * back, while the server itself (s3rver here, the shared RADOS Gateway in the S3 pass, where
 * other suites use it meanwhile) keeps running. Bytes pass unchanged, so signatures hold.
 */
class Relay {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  port = 0;
  /** Accepts connections and never answers (a hung server) instead of relaying. */
  silent = false;

  constructor(private readonly target: URL) {}

  /** Listens (again) on the same port; does nothing while already listening. */
  async start(): Promise<this> {
    if (this.server) return this;
    const server = net.createServer((client) => {
      if (this.silent) {
        this.sockets.add(client);
        client.on('close', () => this.sockets.delete(client));
        client.on('error', () => client.destroy());
        return;
      }
      const upstream = net.connect(Number(this.target.port), this.target.hostname);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
    return this;
  }

  /** Stops listening and cuts every open connection, as a stopped server would. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

const FILE = 'arm-policy-bytes';

describe('object storage stopped mid-upload and mid-publish (issue 28)', () => {
  let s3: S3TestServer;
  let relay: Relay;
  let t: TestApp;
  let seller: { accountId: string; key: string };

  beforeAll(async () => {
    s3 = await startS3Server();
    relay = await new Relay(new URL(s3.env.S3_ENDPOINT)).start();
    t = await startTestApp({ env: { ...s3.env, S3_ENDPOINT: `http://127.0.0.1:${relay.port}`, UPLOAD_MULTIPART_THRESHOLD: String(5 * 1024 * 1024) } });
    seller = await t.accountWithKey({ name: 'Faulty Storage Robotics' });
  });
  afterAll(async () => {
    await t?.close();
    await relay?.stop();
    await s3?.close();
  });
  afterEach(async () => {
    if (relay.silent) {
      relay.silent = false;
      await relay.stop();
    }
    await relay.start();
  });

  /** Bytes of their own per file: bytes frozen before are not copied again. */
  const grantAndPut = async (fileName: string) => {
    // A real model (published files are inspected, issue 40) of its own.
    const bytes = onnxModel({ producer: `bytes of ${fileName}` });
    const grant = await t.request('POST', '/v1/uploads', { key: seller.key, body: { file_name: fileName, file_size: bytes.length } });
    expect(grant.status).toBe(200);
    expect((await t.storage('PUT', grant.body.upload_url, { payload: bytes })).status).toBe(200);
    return grant.body;
  };
  const draftOf = async (fileName: string, title: string) => {
    const draft = await t.request('POST', '/v1/listings', { key: seller.key, body: modelBody(await grantAndPut(fileName), { title }) });
    expect(draft.status).toBe(201);
    return draft.body as { id: string };
  };
  const publish = (id: string) => t.request('POST', `/v1/listings/${id}/publish`, { key: seller.key });
  const published = async (id: string) => (await recordedOfType(t, 'ListingPublished')).filter((e) => e.data.listing_id === id);
  const expectStorageUnavailable = (res: { status: number; headers: Record<string, unknown>; body: any }) => {
    expect(res.status).toBe(503);
    expect(res.body.error).toMatchObject({ code: 'service_unavailable', message: expect.stringMatching(/object storage is unavailable/) });
    expect(res.headers['retry-after']).toBe('1');
  };
  const expectStillDraft = async (id: string) => {
    const listing = await t.request('GET', `/v1/listings/${id}`, { key: seller.key });
    expect(listing.body).toMatchObject({ status: 'draft' });
    expect(listing.body.validation_status).not.toBe('failed');
    expect(await published(id)).toEqual([]);
  };

  it('answers a publish 503 service_unavailable while storage is stopped, publishes nothing, and publishes on a retry once it is back', async () => {
    const draft = await draftOf('stopped.onnx', 'Stopped Storage Arm');
    await relay.stop();
    const started = Date.now();
    expectStorageUnavailable(await publish(draft.id));
    // Bounded: refused connections are retried by the SDK, briefly.
    expect(Date.now() - started).toBeLessThan(10_000);
    await expectStillDraft(draft.id);

    await relay.start();
    expect((await publish(draft.id)).status).toBe(200);
    expect((await t.request('GET', `/v1/listings/${draft.id}`, { key: seller.key })).body.status).toBe('published');
    expect(await published(draft.id)).toHaveLength(1);
  });

  it('answers 503 when storage stops between hashing the upload and copying it, and leaves the listing a draft', async () => {
    const draft = await draftOf('midway.onnx', 'Midway Arm');
    // Every S3 client of this process: storage goes away as the service's CopyObject starts.
    const send = S3Client.prototype.send;
    let stopped = false;
    const spy = jest.spyOn(S3Client.prototype, 'send').mockImplementation(async function (this: S3Client, ...args: any[]) {
      if (args[0] instanceof CopyObjectCommand && !stopped) {
        stopped = true;
        await relay.stop();
      }
      return (send as (...a: any[]) => Promise<unknown>).apply(this, args);
    } as any);
    let res;
    try {
      res = await publish(draft.id);
    } finally {
      spy.mockRestore();
    }
    expect(stopped).toBe(true);
    expectStorageUnavailable(res);
    await expectStillDraft(draft.id);

    await relay.start();
    expect((await publish(draft.id)).status).toBe(200);
    expect(await published(draft.id)).toHaveLength(1);
  });

  it('answers a publish 503 within seconds when storage accepts connections but never answers', async () => {
    const draft = await draftOf('silent.onnx', 'Silent Storage Arm');
    relay.silent = true;
    await relay.stop();
    await relay.start();
    const started = Date.now();
    expectStorageUnavailable(await publish(draft.id));
    // Three attempts of at most 5 s to the response's headers, and the SDK's backoff.
    expect(Date.now() - started).toBeLessThan(20_000);
    await expectStillDraft(draft.id);
    const ready = Date.now();
    expect((await t.request('GET', '/readyz')).body.error.message).toMatch(/storage: unreachable: TimeoutError/);
    expect(Date.now() - ready).toBeLessThan(3_000);
  }, 30_000);

  it('answers the upload check 503 while storage is stopped (the grant itself is signed offline)', async () => {
    await relay.stop();
    const grant = await t.request('POST', '/v1/uploads', { key: seller.key, body: { file_name: 'offline.onnx', file_size: FILE.length } });
    expect(grant.status).toBe(200);
    // The client's PUT meets the stopped server itself.
    await expect(fetch(grant.body.upload_url, { method: 'PUT', body: FILE })).rejects.toThrow();
    expectStorageUnavailable(await t.request('PUT', '/v1/uploads', { key: seller.key, body: { storage_path: grant.body.storage_path } }));

    await relay.start();
    expect((await t.storage('PUT', grant.body.upload_url, { payload: FILE })).status).toBe(200);
    expect((await t.request('PUT', '/v1/uploads', { key: seller.key, body: { storage_path: grant.body.storage_path } })).body).toEqual({ exists: true, size: FILE.length });
  });

  it('answers a multipart grant and its completion 503 while storage is stopped, and grants again once it is back', async () => {
    const large = { file_name: 'large.safetensors', file_size: 12 * 1024 * 1024 };
    const started = await t.request('POST', '/v1/uploads', { key: seller.key, body: large });
    expect(started.status).toBe(200);
    await relay.stop();
    // Starting a multipart upload is a call to storage, unlike signing a single PUT.
    expectStorageUnavailable(await t.request('POST', '/v1/uploads', { key: seller.key, body: large }));
    const parts = [{ part_number: 1, etag: '"0"' }];
    const body = { storage_path: started.body.storage_path, upload_id: started.body.multipart.upload_id, parts };
    expectStorageUnavailable(await t.request('POST', '/v1/uploads/complete', { key: seller.key, body }));
    expectStorageUnavailable(await t.request('PUT', '/v1/uploads', { key: seller.key, body: { storage_path: started.body.storage_path } }));

    await relay.start();
    const again = await t.request('POST', '/v1/uploads', { key: seller.key, body: large });
    expect(again.status).toBe(200);
    expect(again.body.multipart.part_count).toBe(1);
  });

  it('GET /readyz answers 503 not_ready naming storage while it is stopped, quickly, and 200 once it is back', async () => {
    expect((await t.request('GET', '/readyz')).body).toMatchObject({ status: 'ok', info: { storage: { status: 'up' } } });
    await relay.stop();
    const started = Date.now();
    const down = await t.request('GET', '/readyz');
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(down.status).toBe(503);
    expect(down.body.error).toMatchObject({ code: 'not_ready', message: expect.stringMatching(/storage: unreachable/) });
    expect(down.body.error.checks.error).toMatchObject({ storage: { status: 'down' } });
    expect(down.body.error.checks.info).toMatchObject({ database: { status: 'up' }, event_store: { status: 'up' } });
    expect((await t.request('GET', '/healthz')).status).toBe(200);

    await relay.start();
    expect((await t.request('GET', '/readyz')).status).toBe(200);
  });
});

describe('the local store in readiness', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ localStore: true });
  });
  afterAll(() => t.close());

  it('GET /readyz names storage while the blobs directory is gone, and is ready once it is back', async () => {
    expect((await t.request('GET', '/readyz')).body).toMatchObject({ info: { storage: { status: 'up' } } });
    const incoming = path.join(t.dataDir, 'blobs', '.incoming');
    fs.rmSync(incoming, { recursive: true });
    const down = await t.request('GET', '/readyz');
    expect(down.status).toBe(503);
    expect(down.body.error).toMatchObject({ code: 'not_ready', message: expect.stringMatching(/storage: unreachable: ENOENT/) });
    fs.mkdirSync(incoming);
    expect((await t.request('GET', '/readyz')).status).toBe(200);
  });
});
