import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Readable, Transform, TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assertUploadable, BlobStore, Digest, within, FrozenObject, isSafeObjectPath, publishedPath, SignedUpload, StoredObject } from './blob-store';
import { sign, SignedFields, SignatureCheck, verify } from './url-signature';

export class ObjectTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the upload is larger than its limit of ${maxBytes} bytes`);
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

/** Counts bytes as they pass and fails the pipeline the moment the cap is crossed. */
class ByteCap extends Transform {
  bytes = 0;

  constructor(private readonly maxBytes: number) {
    super();
  }

  _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) return callback(new ObjectTooLargeError(this.maxBytes));
    callback(null, chunk);
  }
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
  private readonly secret: string;

  constructor(dataDir: string, private readonly publicBaseUrl: string) {
    this.root = path.join(dataDir, 'blobs');
    // Temp files sit on the same filesystem as their targets so the final rename is atomic.
    this.tmpDir = path.join(this.root, '.incoming');
    fs.mkdirSync(this.tmpDir, { recursive: true });
    this.secret = resolveSigningSecret(dataDir);
  }

  async signUpload(objectPath: string, options: { expiresIn: number; maxBytes: number }): Promise<SignedUpload> {
    assertUploadable(objectPath);
    const fields: SignedFields = { method: 'PUT', path: objectPath, expires: this.expiry(options.expiresIn), maxBytes: options.maxBytes };
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
    try {
      const stats = await fs.promises.stat(this.file(objectPath));
      return stats.isFile() ? { path: objectPath, size: stats.size } : undefined;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
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
          found.push({ path: child, size: (await fs.promises.stat(path.join(this.root, child))).size });
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
  async write(objectPath: string, source: Readable, maxBytes: number): Promise<StoredObject> {
    const target = this.file(objectPath);
    const temp = path.join(this.tmpDir, `${randomBytes(12).toString('hex')}.part`);
    const cap = new ByteCap(maxBytes);
    try {
      await pipeline(source, cap, fs.createWriteStream(temp, { flags: 'wx', highWaterMark: UPLOAD_WRITE_HIGH_WATER_MARK }));
      await fs.promises.mkdir(path.dirname(target), { recursive: true });
      await fs.promises.rename(temp, target);
    } catch (error) {
      await fs.promises.rm(temp, { force: true });
      throw error;
    }
    return { path: objectPath, size: cap.bytes };
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
      signature,
    });
    return `${this.publicBaseUrl}/storage/${encoded}?${query}`;
  }
}
