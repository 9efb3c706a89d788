import { createHash, Hash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Readable, Transform, TransformCallback, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  assertUploadable, BlobStore, ChecksumMismatchError, Digest, ObjectDigest, ExpectedPart, FrozenObject, InvalidPartsError, isSafeObjectPath, publishedPath, SignedUpload, StoredObject,
  UploadNotFoundError, within,
} from './blob-store';
import { sign, SignedFields, SignatureCheck, verify } from './url-signature';

export class ObjectTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the upload is larger than its limit of ${maxBytes} bytes`);
  }
}

/** A part's body ended before the size its URL was signed for; nothing of it was kept. */
export class PartTooShortError extends Error {
  constructor(readonly partNumber: number, readonly bytes: number, readonly size: number) {
    super(`part ${partNumber} is ${bytes} bytes, not the ${size} its URL was signed for`);
  }
}

/**
 * The upload's write stream buffers up to this much while a write is in the thread pool.
 * At the default 16 KiB every 64 KiB socket read is over the mark, so each one pauses the
 * request (and the chain of streams before the file) until the disk write returns; at 1 MiB
 * the socket keeps flowing and the queued chunks go down in one writev. bench/upload.js:
 * about 1.7x the MiB/s of 16 KiB; 256 KiB and 4 MiB measured well below 1 MiB.
 */
const UPLOAD_WRITE_HIGH_WATER_MARK = 1024 * 1024;

/** Completion reads parts in chunks this large: a 6 GiB object is 6k reads rather than 96k at the default 64 KiB. */
const PART_READ_HIGH_WATER_MARK = 1024 * 1024;

const UPLOAD_ID = /^[0-9a-f]{24}$/;
/** <partNumber>-<hex MD5>; anything else a client names cannot be a landed part (nor climb out of the upload). */
const PART_FILE = /^\d+-[0-9a-f]{32}$/;

/**
 * Counts bytes as they pass and fails the pipeline the moment the cap is crossed; feeds
 * them to `hash` too when given (a part's MD5 is its ETag), saving the pipeline a stage.
 */
class ByteCap extends Transform {
  bytes = 0;

  constructor(private readonly maxBytes: number, private readonly hash?: Hash) {
    super();
  }

  _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) return callback(new ObjectTooLargeError(this.maxBytes));
    this.hash?.update(chunk);
    callback(null, chunk);
  }
}

/** A write renames a new file into place: a new inode, so inode and mtime name the bytes. */
const versionOf = (stats: fs.Stats) => `${stats.ino}-${stats.mtimeMs}-${stats.size}`;

/** Undefined where work fails because the file or directory is not there. */
async function ifPresent<T>(work: Promise<T>): Promise<T | undefined> {
  try {
    return await work;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** What startMultipart recorded, or undefined when the upload is gone or its record unreadable. */
async function readUpload(dir: string): Promise<{ path: string; started: number } | undefined> {
  const text = await ifPresent(fs.promises.readFile(path.join(dir, 'upload.json'), 'utf8'));
  let record: { path?: unknown; started?: unknown } | undefined;
  try {
    record = text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
  const started = typeof record?.started === 'string' ? Date.parse(record.started) : NaN;
  return typeof record?.path === 'string' && Number.isFinite(started) ? { path: record.path, started } : undefined;
}

/** The landed parts one after another, for a single pipeline into the object. */
async function* concatenated(parts: { part: ExpectedPart; file: string }[]): AsyncGenerator<Buffer> {
  for (const { part, file } of parts) {
    try {
      yield* fs.createReadStream(file, { highWaterMark: PART_READ_HIGH_WATER_MARK });
    } catch (error) {
      // Replaced by a PUT of the part again, or removed by an abort, since it was checked.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new InvalidPartsError(part.partNumber, `has no landed bytes with ETag ${part.etag}`);
      throw error;
    }
  }
}

/**
 * Takes an upload's directory for one completion or abort by renaming it: whoever renames
 * first has it, and the others find no upload.
 */
async function claim(dir: string, purpose: 'completing' | 'aborting', uploadId: string): Promise<string> {
  const claimed = `${dir}.${purpose}`;
  try {
    await fs.promises.rename(dir, claimed);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new UploadNotFoundError(uploadId);
    throw error;
  }
  return claimed;
}

/** DATA_DIR/blob_signing_key, created on first start, so every instance on one DATA_DIR agrees. */
function resolveSigningSecret(dataDir: string): string {
  const file = path.join(dataDir, 'blob_signing_key');
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  fs.mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(32).toString('hex');
  fs.writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  return secret;
}

/**
 * Objects as files under DATA_DIR/blobs. The service itself answers the signed URLs
 * (local-blob-routes.ts): /storage/<path>?method=&expires=&max_bytes=&signature=.
 */
export class LocalBlobStore implements BlobStore {
  private readonly root: string;
  private readonly tmpDir: string;
  /** One directory per multipart upload: its upload.json and its landed parts. Made by the first start, so .incoming stays empty without one. */
  private readonly multipartDir: string;
  private readonly secret: string;

  constructor(dataDir: string, private readonly publicBaseUrl: string) {
    this.root = path.join(dataDir, 'blobs');
    // Temp files sit on the same filesystem as their targets so the final rename is atomic.
    this.tmpDir = path.join(this.root, '.incoming');
    fs.mkdirSync(this.tmpDir, { recursive: true });
    this.multipartDir = path.join(this.tmpDir, 'multipart');
    this.secret = resolveSigningSecret(dataDir);
  }

  async signUpload(objectPath: string, options: { expiresIn: number; maxBytes: number; sha256?: string }): Promise<SignedUpload> {
    assertUploadable(objectPath);
    const fields: SignedFields = {
      method: 'PUT', path: objectPath, expires: this.expiry(options.expiresIn), maxBytes: options.maxBytes, ...(options.sha256 && { sha256: options.sha256 }),
    };
    const signature = sign(this.secret, fields);
    return { url: this.url(fields, signature), token: signature, expiresIn: options.expiresIn };
  }

  async signDownload(objectPath: string, options: { expiresIn: number; fileName: string }): Promise<string> {
    const fields: SignedFields = { method: 'GET', path: objectPath, expires: this.expiry(options.expiresIn), maxBytes: 0, fileName: options.fileName };
    return this.url(fields, sign(this.secret, fields));
  }

  /** The directory uploads land in (then renamed into place) is there and writable. */
  async probe(timeoutMs: number): Promise<void> {
    await within(timeoutMs, fs.promises.access(this.tmpDir, fs.constants.W_OK));
  }

  check(fields: SignedFields, signature: string): SignatureCheck {
    return verify(this.secret, fields, signature, Math.floor(Date.now() / 1000));
  }

  async stat(objectPath: string): Promise<StoredObject | undefined> {
    const stats = await ifPresent(fs.promises.stat(this.file(objectPath)));
    return stats?.isFile() ? { path: objectPath, size: stats.size, version: versionOf(stats) } : undefined;
  }

  async readRange(objectPath: string, offset: number, length: number): Promise<Uint8Array | undefined> {
    const handle = await ifPresent(fs.promises.open(this.file(objectPath), 'r'));
    if (!handle) return undefined;
    try {
      const size = (await handle.stat()).size;
      const buffer = Buffer.alloc(Math.max(0, Math.min(length, size - offset)));
      let filled = 0;
      while (filled < buffer.length) {
        const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, offset + filled);
        if (!bytesRead) break;
        filled += bytesRead;
      }
      return buffer.subarray(0, filled);
    } finally {
      await handle.close();
    }
  }

  async list(prefix: string): Promise<StoredObject[]> {
    const dir = prefix.endsWith('/') ? prefix.slice(0, -1) : path.posix.dirname(prefix);
    if (dir !== '.' && !isSafeObjectPath(dir)) return [];
    const found: StoredObject[] = [];
    const walk = async (relative: string): Promise<void> => {
      let entries: fs.Dirent[];
      try {
        entries = await fs.promises.readdir(path.join(this.root, relative), { withFileTypes: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw error;
      }
      for (const entry of entries) {
        const child = relative === '.' ? entry.name : `${relative}/${entry.name}`;
        if (entry.isDirectory() && child !== '.incoming') await walk(child);
        else if (entry.isFile() && child.startsWith(prefix)) {
          const stats = await fs.promises.stat(path.join(this.root, child));
          found.push({ path: child, size: stats.size, version: versionOf(stats) });
        }
      }
    };
    await walk(dir);
    return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /**
   * Streams source into objectPath without holding it in memory: bytes go to a temp file
   * and are renamed into place only when the whole body arrived within maxBytes, so a
   * broken or oversized upload leaves nothing behind and readers never see half a file.
   */
  async write(objectPath: string, source: Readable, maxBytes: number, sha256?: string): Promise<StoredObject> {
    const target = this.file(objectPath);
    const hash = sha256 ? createHash('sha256') : undefined;
    const cap = new ByteCap(maxBytes, hash);
    await this.receive(source, cap, async (temp) => {
      // A URL bound to a sha256 takes those bytes only, as S3 does with x-amz-checksum-sha256.
      const actual = hash?.digest('hex');
      if (sha256 && actual !== sha256) throw new ChecksumMismatchError(sha256, actual!);
      await fs.promises.mkdir(path.dirname(target), { recursive: true });
      await fs.promises.rename(temp, target);
    });
    return { path: objectPath, size: cap.bytes };
  }

  /** The file is opened once: its version is the one whose bytes were hashed, even if the path is written meanwhile. */
  async digest(objectPath: string): Promise<ObjectDigest | undefined> {
    const handle = await ifPresent(fs.promises.open(this.file(objectPath), 'r'));
    if (!handle) return undefined;
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) return undefined;
      const digest = new Digest();
      await pipeline(handle.createReadStream({ autoClose: false, highWaterMark: PART_READ_HIGH_WATER_MARK }), digest, new Writable({ write: (_c, _e, done) => done() }));
      return { path: objectPath, size: digest.size, sha256: digest.sha256, version: versionOf(stats) };
    } finally {
      await handle.close();
    }
  }

  /**
   * Lands source as part `partNumber` of the upload only when it is exactly `size` bytes,
   * as <partNumber>-<md5>, replacing an earlier PUT of the same part; answers the MD5 (the ETag).
   */
  async writePart(objectPath: string, uploadId: string, partNumber: number, source: Readable, size: number): Promise<{ size: number; etag: string }> {
    const dir = await this.upload(objectPath, uploadId);
    const md5 = createHash('md5');
    const cap = new ByteCap(size, md5);
    return this.receive(source, cap, async (temp) => {
      if (cap.bytes < size) throw new PartTooShortError(partNumber, cap.bytes, size);
      const etag = md5.digest('hex');
      const name = `${partNumber}-${etag}`;
      try {
        // Earlier copies go before this one lands, so two PUTs of one part racing each other
        // cannot remove each other's file: at least the later one stays.
        for (const other of await fs.promises.readdir(dir)) {
          if (other.startsWith(`${partNumber}-`) && other !== name) await fs.promises.rm(path.join(dir, other), { force: true });
        }
        await fs.promises.rename(temp, path.join(dir, name));
      } catch (error) {
        // Completed, aborted or swept while the part was arriving.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new UploadNotFoundError(uploadId);
        throw error;
      }
      return { size: cap.bytes, etag };
    });
  }

  /**
   * Streams source through cap into a new temp file beside the store, then hands it to
   * place to move; the temp file is removed when any of that fails.
   */
  private async receive<T>(source: Readable, cap: ByteCap, place: (temp: string) => Promise<T>): Promise<T> {
    const temp = path.join(this.tmpDir, `${randomBytes(12).toString('hex')}.part`);
    try {
      await pipeline(source, cap, fs.createWriteStream(temp, { flags: 'wx', highWaterMark: UPLOAD_WRITE_HIGH_WATER_MARK }));
      return await place(temp);
    } catch (error) {
      await fs.promises.rm(temp, { force: true });
      throw error;
    }
  }

  async startMultipart(objectPath: string): Promise<string> {
    assertUploadable(objectPath);
    this.file(objectPath);
    const uploadId = randomBytes(12).toString('hex');
    const dir = path.join(this.multipartDir, uploadId);
    await fs.promises.mkdir(dir, { recursive: true });
    await fs.promises.writeFile(path.join(dir, 'upload.json'), JSON.stringify({ path: objectPath, started: new Date().toISOString() }));
    return uploadId;
  }

  async signPart(objectPath: string, uploadId: string, part: { partNumber: number; size: number }, options: { expiresIn: number }): Promise<string> {
    assertUploadable(objectPath);
    const fields: SignedFields = {
      method: 'PUT', path: objectPath, expires: this.expiry(options.expiresIn), maxBytes: part.size, uploadId, partNumber: part.partNumber,
    };
    return this.url(fields, sign(this.secret, fields));
  }

  /**
   * Every part is checked before a byte is copied; the parts are then streamed into one temp
   * file (write()), so nothing appears at objectPath unless all of them made it.
   */
  async completeMultipart(objectPath: string, uploadId: string, parts: ExpectedPart[]): Promise<StoredObject> {
    const dir = await this.upload(objectPath, uploadId);
    const landed: { part: ExpectedPart; file: string }[] = [];
    for (const part of parts) {
      const name = `${part.partNumber}-${part.etag.replace(/"/g, '').toLowerCase()}`;
      const size = PART_FILE.test(name) ? (await ifPresent(fs.promises.stat(path.join(dir, name))))?.size : undefined;
      if (size === undefined) {
        // Aborted, swept or completed meanwhile: the parts went with the upload.
        if (!(await readUpload(dir))) throw new UploadNotFoundError(uploadId);
        throw new InvalidPartsError(part.partNumber, `has no landed bytes with ETag ${part.etag}`);
      }
      if (size !== part.size) throw new InvalidPartsError(part.partNumber, `is ${size} bytes, not the ${part.size} its URL was signed for`);
      landed.push({ part, file: name });
    }
    // A second completion or an abort meanwhile finds no upload (404) rather than parts going
    // missing under it; given back if the join fails.
    const claimed = await claim(dir, 'completing', uploadId);
    let stored: StoredObject;
    try {
      const files = landed.map(({ part, file }) => ({ part, file: path.join(claimed, file) }));
      stored = await this.write(objectPath, Readable.from(concatenated(files)), parts.reduce((sum, p) => sum + p.size, 0));
    } catch (error) {
      await fs.promises.rename(claimed, dir).catch(() => undefined);
      throw error;
    }
    await fs.promises.rm(claimed, { recursive: true, force: true });
    return stored;
  }

  async abortMultipart(objectPath: string, uploadId: string): Promise<void> {
    // Of an abort and a completion racing, one wins whole.
    const claimed = await claim(await this.upload(objectPath, uploadId), 'aborting', uploadId);
    await fs.promises.rm(claimed, { recursive: true, force: true });
  }

  /** An upload whose upload.json cannot be read counts as started when its directory last changed. */
  async sweepMultipart(startedBefore: Date): Promise<number> {
    let swept = 0;
    for (const uploadId of (await ifPresent(fs.promises.readdir(this.multipartDir))) ?? []) {
      const dir = path.join(this.multipartDir, uploadId);
      // Undefined once the upload was completed or aborted since the listing.
      const started = (await readUpload(dir))?.started ?? (await ifPresent(fs.promises.stat(dir)))?.mtimeMs;
      if (started === undefined || started >= startedBefore.getTime()) continue;
      await fs.promises.rm(dir, { recursive: true, force: true });
      swept++;
    }
    return swept;
  }

  /** The upload's directory, when the upload is in progress for objectPath. */
  private async upload(objectPath: string, uploadId: string): Promise<string> {
    const dir = path.join(this.multipartDir, uploadId);
    if (!UPLOAD_ID.test(uploadId) || (await readUpload(dir))?.path !== objectPath) throw new UploadNotFoundError(uploadId);
    return dir;
  }

  put(objectPath: string, bytes: Uint8Array): Promise<StoredObject> {
    return this.write(objectPath, Readable.from([Buffer.from(bytes)]), bytes.length);
  }

  /**
   * One read of the source feeds both the hash and a temp file, which is renamed to its
   * hash's key; a write to objectPath meanwhile replaces the path, not the file being read.
   */
  async freeze(objectPath: string): Promise<FrozenObject | undefined> {
    const source = this.file(objectPath);
    const temp = path.join(this.tmpDir, `${randomBytes(12).toString('hex')}.part`);
    const digest = new Digest();
    try {
      await pipeline(fs.createReadStream(source), digest, fs.createWriteStream(temp, { flags: 'wx' }));
      const frozen = publishedPath(digest.sha256);
      await fs.promises.mkdir(path.dirname(this.file(frozen)), { recursive: true });
      await fs.promises.rename(temp, this.file(frozen));
      return { path: frozen, size: digest.size, sha256: digest.sha256 };
    } catch (error) {
      await fs.promises.rm(temp, { force: true });
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  /** A byte range [start, end] of a stored object (inclusive, as in HTTP Range). */
  read(objectPath: string, range?: { start: number; end: number }): Readable {
    return fs.createReadStream(this.file(objectPath), range);
  }

  private file(objectPath: string): string {
    if (!isSafeObjectPath(objectPath)) throw new Error(`unsafe object path: ${objectPath}`);
    const resolved = path.resolve(this.root, objectPath);
    if (!resolved.startsWith(this.root + path.sep)) throw new Error(`object path escapes the store: ${objectPath}`);
    return resolved;
  }

  private expiry(expiresIn: number): number {
    return Math.floor(Date.now() / 1000) + expiresIn;
  }

  private url(fields: SignedFields, signature: string): string {
    const encoded = fields.path.split('/').map(encodeURIComponent).join('/');
    const query = new URLSearchParams({
      method: fields.method,
      expires: String(fields.expires),
      ...(fields.method === 'PUT' ? { max_bytes: String(fields.maxBytes) } : { file_name: fields.fileName ?? '' }),
      ...(fields.uploadId !== undefined ? { upload_id: fields.uploadId, part_number: String(fields.partNumber) } : {}),
      ...(fields.sha256 !== undefined ? { sha256: fields.sha256 } : {}),
      signature,
    });
    return `${this.publicBaseUrl}/storage/${encoded}?${query}`;
  }
}
