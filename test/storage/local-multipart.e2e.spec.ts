import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { BLOB_STORE, ExpectedPart, InvalidPartsError, UploadNotFoundError } from '../../src/storage/blob-store';
import { LocalBlobStore } from '../../src/storage/local-blob-store';
import { startTestApp, TestApp } from '../support/app';

/** Multipart uploads on the local store, with the parts PUT over a real socket to its signed URLs. */
describe('local multipart uploads', () => {
  let t: TestApp;
  let origin: string;
  let store: LocalBlobStore;
  let counter = 0;

  beforeAll(async () => {
    t = await startTestApp({ localStore: true });
    await t.app.listen(0, '127.0.0.1');
    origin = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    store = t.app.get(BLOB_STORE);
  });
  afterAll(() => t.close());

  const objectPath = () => `user/acct_multipart/${++counter}-model.onnx`;
  const uploadDir = (uploadId: string) => path.join(t.dataDir, 'blobs', '.incoming', 'multipart', uploadId);
  const partFiles = (uploadId: string, partNumber: number) => fs.readdirSync(uploadDir(uploadId)).filter((f) => f.startsWith(`${partNumber}-`));
  const md5 = (bytes: Buffer) => `"${createHash('md5').update(bytes).digest('hex')}"`;
  /** The parts' bytes: sizes differ so a swapped or mis-sized part shows. */
  const partsOf = (...sizes: number[]) => sizes.map((size) => randomBytes(size));

  const put = async (url: string, body: Buffer) => {
    const u = new URL(url);
    const res = await fetch(`${origin}${u.pathname}${u.search}`, { method: 'PUT', body, headers: { 'content-type': 'application/octet-stream' } });
    const text = await res.text();
    return { status: res.status, etag: res.headers.get('etag'), body: text ? JSON.parse(text) : undefined };
  };
  const sign = (p: string, uploadId: string, partNumber: number, size: number) => store.signPart(p, uploadId, { partNumber, size }, { expiresIn: 300 });
  /** Signs and PUTs every part, all at once and last first; answers what completion needs. */
  const putAll = async (p: string, uploadId: string, parts: Buffer[]): Promise<ExpectedPart[]> => {
    const numbered = parts.map((bytes, i) => ({ bytes, partNumber: i + 1 })).reverse();
    const landed = await Promise.all(
      numbered.map(async ({ bytes, partNumber }) => {
        const res = await put(await sign(p, uploadId, partNumber, bytes.length), bytes);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ part_number: partNumber, size: bytes.length, etag: md5(bytes) });
        expect(res.etag).toBe(md5(bytes));
        return { partNumber, etag: res.etag!, size: bytes.length };
      }),
    );
    return landed.reverse();
  };
  const stored = (p: string) => fs.readFileSync(path.join(t.dataDir, 'blobs', p));

  it('joins parts PUT in parallel and out of order into the object, then drops the upload', async () => {
    const p = objectPath();
    const uploadId = await store.startMultipart(p);
    expect(uploadId).toMatch(/^[0-9a-f]{24}$/);
    const parts = partsOf(1000, 700, 300);
    const expected = await putAll(p, uploadId, parts);

    expect(await store.completeMultipart(p, uploadId, expected)).toEqual({ path: p, size: 2000 });
    expect(stored(p).equals(Buffer.concat(parts))).toBe(true);
    expect(fs.existsSync(uploadDir(uploadId))).toBe(false);
    await expect(store.completeMultipart(p, uploadId, expected)).rejects.toThrow(UploadNotFoundError);
  });

  it('refuses a completion naming a wrong ETag, keeping the parts for a right one', async () => {
    const p = objectPath();
    const uploadId = await store.startMultipart(p);
    const parts = partsOf(100, 200, 50);
    const expected = await putAll(p, uploadId, parts);

    const wrong = expected.map((part) => (part.partNumber === 2 ? { ...part, etag: md5(Buffer.from('other')) } : part));
    const refusal = store.completeMultipart(p, uploadId, wrong);
    await expect(refusal).rejects.toThrow(InvalidPartsError);
    await expect(refusal).rejects.toMatchObject({ partNumber: 2, message: expect.stringContaining('part 2 has no landed bytes') });
    const misSized = expected.map((part) => (part.partNumber === 3 ? { ...part, size: 60 } : part));
    await expect(store.completeMultipart(p, uploadId, misSized)).rejects.toMatchObject({
      partNumber: 3,
      message: 'part 3 is 50 bytes, not the 60 its URL was signed for',
    });
    // Neither refusal can reach out of the upload through the ETag it names.
    await expect(store.completeMultipart(p, uploadId, [{ ...expected[0], etag: '../../upload.json' }])).rejects.toMatchObject({ partNumber: 1 });
    expect(fs.existsSync(path.join(t.dataDir, 'blobs', p))).toBe(false);

    await store.completeMultipart(p, uploadId, expected);
    expect(stored(p).equals(Buffer.concat(parts))).toBe(true);
  });

  it('completes once when two completions race, the other finding no upload; an abort racing a completion: one of them wins, whole', async () => {
    const twenty = () => partsOf(...Array.from({ length: 20 }, () => 64 * 1024));
    const p = objectPath();
    const uploadId = await store.startMultipart(p);
    const parts = twenty();
    const expected = await putAll(p, uploadId, parts);
    const [first, second] = await Promise.allSettled([store.completeMultipart(p, uploadId, expected), store.completeMultipart(p, uploadId, expected)]);
    const outcomes = [first, second].map((r) => r.status);
    expect(outcomes.sort()).toEqual(['fulfilled', 'rejected']);
    expect(([first, second].find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toBeInstanceOf(UploadNotFoundError);
    expect(stored(p).equals(Buffer.concat(parts))).toBe(true);

    const q = objectPath();
    const raced = await store.startMultipart(q);
    const others = twenty();
    const expectedOthers = await putAll(q, raced, others);
    const [completion, abort] = await Promise.allSettled([store.completeMultipart(q, raced, expectedOthers), store.abortMultipart(q, raced)]);
    const loser = [completion, abort].filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(loser).toHaveLength(1);
    expect(loser[0].reason).toBeInstanceOf(UploadNotFoundError);
    if (completion.status === 'fulfilled') expect(stored(q).equals(Buffer.concat(others))).toBe(true);
    else expect(fs.existsSync(path.join(t.dataDir, 'blobs', q))).toBe(false);
    expect(fs.readdirSync(path.join(t.dataDir, 'blobs', '.incoming', 'multipart'))).toEqual([]);
  });

  it('replaces a part PUT again with other bytes', async () => {
    const p = objectPath();
    const uploadId = await store.startMultipart(p);
    const [first, second] = partsOf(100, 40);
    const [old] = await putAll(p, uploadId, [first, second]);
    const again = randomBytes(100);
    const res = await put(await sign(p, uploadId, 1, 100), again);
    expect(res.status).toBe(200);
    expect(partFiles(uploadId, 1)).toEqual([`1-${md5(again).slice(1, -1)}`]);

    const rest = { partNumber: 2, etag: md5(second), size: 40 };
    await expect(store.completeMultipart(p, uploadId, [old, rest])).rejects.toMatchObject({ partNumber: 1 });
    await store.completeMultipart(p, uploadId, [{ partNumber: 1, etag: res.etag!, size: 100 }, rest]);
    expect(stored(p).equals(Buffer.concat([again, second]))).toBe(true);
  });

  it('takes a part of exactly its signed size only, landing nothing otherwise', async () => {
    const p = objectPath();
    const uploadId = await store.startMultipart(p);
    const url = await sign(p, uploadId, 1, 100);

    const short = await put(url, randomBytes(99));
    expect(short.status).toBe(400);
    expect(short.body.error.code).toBe('validation_failed');
    expect(short.body.error.message).toMatch(/Part 1 is 99 bytes.*exactly 100/);
    const long = await put(url, randomBytes(101));
    expect(long.status).toBe(413);
    expect(long.body.error.code).toBe('payload_too_large');
    expect(partFiles(uploadId, 1)).toEqual([]);
    // Nor is a temp file left beside the uploads.
    expect(fs.readdirSync(path.join(t.dataDir, 'blobs', '.incoming'))).toEqual(['multipart']);
  });

  it('refuses a part URL with a changed part number, upload, size or none of them, and an expired one', async () => {
    const p = objectPath();
    const uploadId = await store.startMultipart(p);
    const otherUpload = await store.startMultipart(p);
    const url = new URL(await sign(p, uploadId, 1, 10));
    const changed = (name: string, value: string | undefined) => {
      const u = new URL(url);
      if (value === undefined) u.searchParams.delete(name);
      else u.searchParams.set(name, value);
      return u.toString();
    };
    const refused = [
      changed('part_number', '2'),
      changed('part_number', '0'),
      changed('part_number', '10001'),
      changed('upload_id', otherUpload),
      changed('upload_id', 'not-an-upload'),
      changed('max_bytes', '11'),
      // Without its part fields it would be a single PUT of the object itself.
      changed('upload_id', undefined),
      await store.signPart(p, uploadId, { partNumber: 1, size: 10 }, { expiresIn: -1 }),
    ];
    for (const u of refused) {
      const res = await put(u, randomBytes(10));
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
    }
    expect((await put(refused.at(-1)!, randomBytes(10))).body.error.message).toMatch(/expired/);
    expect(partFiles(uploadId, 1)).toEqual([]);
    expect(fs.readdirSync(uploadDir(otherUpload))).toEqual(['upload.json']);
    expect(fs.existsSync(path.join(t.dataDir, 'blobs', p))).toBe(false);
  });

  it('answers 404 to a part of an aborted upload, and refuses to complete it', async () => {
    const p = objectPath();
    const uploadId = await store.startMultipart(p);
    const [bytes] = partsOf(10);
    const expected = await putAll(p, uploadId, [bytes]);
    const url = await sign(p, uploadId, 2, 10);
    // An upload belongs to its own path, whatever another path's URL names.
    expect((await put(await sign(objectPath(), uploadId, 2, 10), randomBytes(10))).status).toBe(404);
    await expect(store.abortMultipart(objectPath(), uploadId)).rejects.toThrow(UploadNotFoundError);
    await store.abortMultipart(p, uploadId);

    expect(fs.existsSync(uploadDir(uploadId))).toBe(false);
    const res = await put(url, randomBytes(10));
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({
      code: 'not_found',
      message: 'This multipart upload was completed, aborted or has expired; start a new upload.',
    });
    await expect(store.completeMultipart(p, uploadId, expected)).rejects.toThrow(UploadNotFoundError);
    await expect(store.abortMultipart(p, uploadId)).rejects.toThrow(UploadNotFoundError);
  });

  it('sweeps uploads started before the cutoff, including one whose record is unreadable, and keeps fresh ones', async () => {
    const p = objectPath();
    const old = await store.startMultipart(p);
    fs.writeFileSync(path.join(uploadDir(old), 'upload.json'), JSON.stringify({ path: p, started: '2020-01-01T00:00:00.000Z' }));
    const unreadable = await store.startMultipart(p);
    fs.writeFileSync(path.join(uploadDir(unreadable), 'upload.json'), '{"path":');
    fs.utimesSync(uploadDir(unreadable), new Date('2020-01-01'), new Date('2020-01-01'));
    const fresh = await store.startMultipart(p);

    expect(await store.sweepMultipart(new Date(Date.now() - 3600_000))).toBe(2);
    expect(fs.existsSync(uploadDir(old))).toBe(false);
    expect(fs.existsSync(uploadDir(unreadable))).toBe(false);
    expect(fs.existsSync(uploadDir(fresh))).toBe(true);
    await expect(store.completeMultipart(p, old, [])).rejects.toThrow(UploadNotFoundError);
  });

  it('starts uploads only for safe paths that may be uploaded to', async () => {
    await expect(store.startMultipart('user/../escape.onnx')).rejects.toThrow(/unsafe/);
    await expect(store.startMultipart('published/abc')).rejects.toThrow(/published/);
  });
});
