import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadSettings } from '../../src/config/settings';
import { BlobStore } from '../../src/storage/blob-store';
import { LocalBlobStore } from '../../src/storage/local-blob-store';
import { S3BlobStore } from '../../src/storage/s3-blob-store';
import { startS3Server, S3TestServer } from '../storage/s3-server';

/** BlobStore.put (added for generated artifacts) on both adapters: writes, replaces, serves. */
describe.each([
  ['local', async () => ({ store: new LocalBlobStore(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-put-')), 'http://127.0.0.1:1') as BlobStore, close: async () => undefined })],
  [
    's3 (s3rver)',
    async () => {
      const s3: S3TestServer = await startS3Server();
      const store = S3BlobStore.fromSettings(loadSettings({ DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'svc-s3-')), ...s3.env }).s3!);
      return { store: store as BlobStore, close: () => s3.close() };
    },
  ],
])('BlobStore.put on %s', (_name, open) => {
  let store: BlobStore;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ store, close } = await open());
  });
  afterAll(() => close());

  test('stores the bytes at the key, and a second put of the same key replaces them (one object)', async () => {
    const key = 'user/acct_a/factory/job_x/build-1/arm.zip';
    expect(await store.put(key, Buffer.from('first'))).toEqual({ path: key, size: 5 });
    expect(await store.put(key, Buffer.from('second!'))).toEqual({ path: key, size: 7 });
    expect(await store.list('user/acct_a/factory/job_x/')).toEqual([{ path: key, size: 7, version: expect.any(String) }]);
    const frozen = await store.freeze(key);
    expect(frozen?.size).toBe(7);
  });
});
