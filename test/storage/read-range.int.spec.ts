import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadSettings } from '../../src/config/settings';
import { BlobStore } from '../../src/storage/blob-store';
import { LocalBlobStore } from '../../src/storage/local-blob-store';
import { S3BlobStore } from '../../src/storage/s3-blob-store';
import { startS3Server, S3TestServer } from './s3-server';

/** BlobStore.readRange (issue 40: inspection reads headers and footers by range), on both adapters. */
describe.each(['local', 's3'] as const)('readRange on the %s store', (adapter) => {
  let s3: S3TestServer | undefined;
  let store: BlobStore;

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-range-'));
    if (adapter === 's3') {
      s3 = await startS3Server();
      store = S3BlobStore.fromSettings(loadSettings({ DATA_DIR: dataDir, ...s3.env }).s3!);
    } else store = new LocalBlobStore(dataDir, 'http://127.0.0.1');
    await store.put('user/acct_r/1-a.bin', new TextEncoder().encode('0123456789'));
  });
  afterAll(async () => s3?.close());

  const text = (bytes: Uint8Array | undefined) => (bytes ? new TextDecoder().decode(bytes) : bytes);

  it('answers the bytes asked for, fewer at the end of the object, none past it', async () => {
    expect(text(await store.readRange('user/acct_r/1-a.bin', 3, 3))).toBe('345');
    expect(text(await store.readRange('user/acct_r/1-a.bin', 0, 10))).toBe('0123456789');
    expect(text(await store.readRange('user/acct_r/1-a.bin', 8, 10))).toBe('89');
    expect(text(await store.readRange('user/acct_r/1-a.bin', 10, 5))).toBe('');
  });

  it('answers undefined when nothing is stored at the path', async () => {
    expect(await store.readRange('user/acct_r/missing.bin', 0, 4)).toBeUndefined();
  });
});
