import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { loadSettings } from '../../src/config/settings';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { BlobStore, ObjectChangedError } from '../../src/storage/blob-store';
import { LocalBlobStore } from '../../src/storage/local-blob-store';
import { CopyLimits, S3BlobStore } from '../../src/storage/s3-blob-store';
import { sha256 } from '../catalog/catalog-client';
import { EXTERNAL_S3_SKIP_REASON, onExternalS3, s3ClientFor, startS3Server, S3TestServer } from './s3-server';

/**
 * BlobStore.freeze on both adapters: the copy lands at published/<sha256>, later writes to
 * the source leave it alone, and no upload URL can be signed for a published key.
 */
describe.each(['local', 's3'] as const)('freeze on the %s store', (adapter) => {
  let s3: S3TestServer | undefined;
  let store: BlobStore;
  let put: (key: string, content: string) => Promise<void>;
  let read: (key: string) => Promise<string>;

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-freeze-'));
    if (adapter === 'local') {
      const local = new LocalBlobStore(dataDir, 'http://127.0.0.1:1');
      store = local;
      put = async (key, content) => void (await local.write(key, Readable.from([Buffer.from(content)]), 1024));
      read = async (key) => fs.readFileSync(path.join(dataDir, 'blobs', key), 'utf8');
      return;
    }
    s3 = await startS3Server();
    store = S3BlobStore.fromSettings(loadSettings({ DATA_DIR: dataDir, ...s3.env }).s3!);
    put = async (key, content) => {
      const signed = await store.signUpload(key, { expiresIn: 60, maxBytes: content.length });
      expect((await fetch(signed.url, { method: 'PUT', body: content })).status).toBe(200);
    };
    read = async (key) => (await fetch(await store.signDownload(key, { expiresIn: 60, fileName: 'x' }))).text();
  });
  afterAll(() => s3?.close());

  it('copies an object to published/<sha256> and a later write to the source leaves the copy as it was', async () => {
    await put('user/acct_a/1-policy.onnx', 'sixteen-bytes-v1');
    const frozen = await store.freeze('user/acct_a/1-policy.onnx');
    expect(frozen).toEqual({ path: `published/${sha256('sixteen-bytes-v1')}`, size: 16, sha256: sha256('sixteen-bytes-v1') });

    await put('user/acct_a/1-policy.onnx', 'evil!');
    expect(await store.stat(frozen!.path)).toEqual({ path: frozen!.path, size: 16, version: expect.any(String) });
    expect(await read(frozen!.path)).toBe('sixteen-bytes-v1');
    expect(await read('user/acct_a/1-policy.onnx')).toBe('evil!');
  });

  it('freezes identical bytes to the same key, and answers undefined when nothing is stored', async () => {
    await put('user/acct_b/1-a.csv', 'same');
    await put('user/acct_c/2-b.csv', 'same');
    expect((await store.freeze('user/acct_b/1-a.csv'))!.path).toBe((await store.freeze('user/acct_c/2-b.csv'))!.path);
    expect(await store.freeze('user/acct_b/nothing.csv')).toBeUndefined();
  });

  it('refuses to sign an upload URL for a published key', async () => {
    await expect(store.signUpload(`published/${sha256('x')}`, { expiresIn: 60, maxBytes: 1 })).rejects.toThrow(/published/);
  });
});

/**
 * An S3 adapter on the test server whose client, when told to, overwrites an object just as
 * it sends `command` (after the freeze's GET hashed the object): the race the freeze guards.
 */
async function racingStore(command: 'CopyObjectCommand' | 'UploadPartCopyCommand', copyLimits?: CopyLimits) {
  const s3 = await startS3Server();
  const settings = loadSettings({ DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'svc-freeze-')), ...s3.env }).s3!;
  const writer = s3ClientFor(settings);
  const client = s3ClientFor(settings);
  const race: { overwrite?: { key: string; content: string | Buffer } } = {};
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === command && race.overwrite) {
        const { key, content } = race.overwrite;
        race.overwrite = undefined;
        await writer.send(new PutObjectCommand({ Bucket: settings.bucket, Key: key, Body: content }));
      }
      return next(args);
    },
    { step: 'initialize', name: 'overwriteBeforeCopy' },
  );
  const store: BlobStore = new S3BlobStore(client, settings.bucket, copyLimits);
  const close = async () => {
    client.destroy();
    writer.destroy();
    await s3.close();
  };
  return { store, race, close };
}

/**
 * The freeze's guard on S3: an object overwritten between the GET that hashed it and the
 * server-side copy is not published. The gateway of the S3 pass refuses the conditional copy
 * (412, from x-amz-copy-if-match); s3rver ignores both condition headers, and the copy's
 * ETag gives the change away. Either way: ObjectChangedError and no published copy.
 */
describe('freeze on S3 when the object changes between hash and copy', () => {
  let racing: Awaited<ReturnType<typeof racingStore>>;
  let store: BlobStore;

  beforeAll(async () => {
    racing = await racingStore('CopyObjectCommand');
    store = racing.store;
  });
  afterAll(() => racing.close());

  it('throws ObjectChangedError and leaves nothing at published/<sha256> of either version', async () => {
    const key = 'user/acct_r/1-race.onnx';
    await store.put(key, Buffer.from('racing-bytes-v1!'));
    racing.race.overwrite = { key, content: 'racing-bytes-v2!' };
    await expect(store.freeze(key)).rejects.toBeInstanceOf(ObjectChangedError);
    expect(racing.race.overwrite).toBeUndefined();
    expect(await store.stat(`published/${sha256('racing-bytes-v1!')}`)).toBeUndefined();
    expect(await store.stat(`published/${sha256('racing-bytes-v2!')}`)).toBeUndefined();

    // Frozen again with nothing in between, the object's current bytes are published.
    expect(await store.freeze(key)).toEqual({ path: `published/${sha256('racing-bytes-v2!')}`, size: 16, sha256: sha256('racing-bytes-v2!') });
  });
});

/**
 * Objects above one CopyObject's 5 GiB are frozen by a multipart copy (UploadPartCopy in
 * ranges), and the result's ETag is checked against the one computed from the bytes hashed.
 * The limits are lowered here so 12 MiB takes three ranges; s3rver has no UploadPartCopy,
 * so this runs on the gateway of the S3 pass.
 */
(onExternalS3 ? describe : describe.skip)(`freeze in ranges on S3${onExternalS3 ? '' : ` (${EXTERNAL_S3_SKIP_REASON})`}`, () => {
  const MiB = 1024 * 1024;
  let racing: Awaited<ReturnType<typeof racingStore>>;
  let store: BlobStore;

  beforeAll(async () => {
    racing = await racingStore('UploadPartCopyCommand', { singleMaxBytes: 5 * MiB, partSize: 5 * MiB });
    store = racing.store;
  });
  afterAll(() => racing.close());

  const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

  it('copies an object above the single-copy limit in ranges, byte for byte', async () => {
    const bytes = randomBytes(12 * MiB + 3);
    await store.put('user/acct_big/1-big.safetensors', bytes);
    const frozen = await store.freeze('user/acct_big/1-big.safetensors');
    expect(frozen).toEqual({ path: `published/${sha(bytes)}`, size: bytes.length, sha256: sha(bytes) });
    const served = Buffer.from(await (await fetch(await store.signDownload(frozen!.path, { expiresIn: 60, fileName: 'big.safetensors' }))).arrayBuffer());
    expect(sha(served)).toBe(sha(bytes));
  });

  it('refuses a ranged copy of an object overwritten between hash and copy, publishing neither version', async () => {
    const key = 'user/acct_big/1-race.safetensors';
    const first = randomBytes(11 * MiB);
    const second = randomBytes(11 * MiB);
    await store.put(key, first);
    racing.race.overwrite = { key, content: second };
    await expect(store.freeze(key)).rejects.toBeInstanceOf(ObjectChangedError);
    expect(racing.race.overwrite).toBeUndefined();
    expect(await store.stat(`published/${sha(first)}`)).toBeUndefined();
    expect(await store.stat(`published/${sha(second)}`)).toBeUndefined();
  });
});
