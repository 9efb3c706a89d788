import { createHash } from 'node:crypto';
import { Transform, TransformCallback } from 'node:stream';
import { DependencyUnavailable } from '../platform/errors';

/**
 * The BlobStore port: object storage reached by clients through signed URLs, so artifact
 * bytes never pass through the API. Adapters: the local store under DATA_DIR (the service
 * serves its own signed URLs) and S3. Paths are relative keys ("user/acct_x/1700000000-a.onnx")
 * that callers have already checked; adapters still refuse anything that could climb out.
 */
export interface StoredObject {
  path: string;
  size: number;
  /**
   * What changes when the object is written again (S3: its ETag; local: the file's inode and
   * mtime), so what was learnt about one version (its sha256) is not taken for the next.
   */
  version?: string;
}

/** The SHA-256 of an object's bytes as one read of them found, with the version read. */
export interface ObjectDigest {
  path: string;
  size: number;
  sha256: string;
  version: string;
}

/** An object copied to its content-addressed key: published/<sha256>. */
export interface FrozenObject extends StoredObject {
  /** Lowercase hex SHA-256 of the bytes. */
  sha256: string;
}

export interface SignedUpload {
  url: string;
  /** The credential the URL carries (its signature), for clients that log or compare grants. */
  token: string;
  expiresIn: number;
  /**
   * Headers the PUT must carry for the signature to hold (S3: x-amz-checksum-sha256 when a
   * sha256 was bound); none when the URL says it all.
   */
  headers?: Record<string, string>;
}

/** A PUT whose bytes are not the sha256 its URL was signed for; nothing was stored. */
export class ChecksumMismatchError extends Error {
  constructor(readonly expected: string, readonly actual: string) {
    super(`the bytes have sha256 ${actual}, not the ${expected} the upload URL was signed for`);
  }
}

/** Lowercase hex SHA-256, as the API shows it. */
export const SHA256_HEX = /^[0-9a-f]{64}$/;

export interface BlobStore {
  /**
   * A URL that accepts one PUT of at most maxBytes to path until expiresIn seconds pass; with
   * sha256 (lowercase hex), only of bytes with that SHA-256 (S3: the gateway checks
   * x-amz-checksum-sha256; local: the store checks on receipt): other bytes are refused and
   * nothing is stored.
   */
  signUpload(path: string, options: { expiresIn: number; maxBytes: number; sha256?: string }): Promise<SignedUpload>;
  /** A URL that serves path (with Range support) until expiresIn seconds pass. */
  signDownload(path: string, options: { expiresIn: number; fileName: string }): Promise<string>;
  /** Size of a landed object, or undefined when nothing is stored at path. */
  stat(path: string): Promise<StoredObject | undefined>;
  /**
   * Writes bytes the service produced itself (a generated artifact) to path, replacing
   * what is there; readers never see half an object.
   */
  put(path: string, bytes: Uint8Array): Promise<StoredObject>;
  /**
   * The bytes of path from offset, at most length of them (fewer at the end of the object):
   * one ranged GET, so inspection reads headers, footers and indexes, never a whole large
   * file. Undefined when nothing is stored at path.
   */
  readRange(path: string, offset: number, length: number): Promise<Uint8Array | undefined>;
  /** Every landed object whose path starts with prefix, in path order. */
  list(prefix: string): Promise<StoredObject[]>;
  /** Reads the whole object once and hashes it; undefined when nothing is stored at path. */
  digest(path: string): Promise<ObjectDigest | undefined>;
  /**
   * Copies the object at path to published/<sha256 of its bytes>, a key no upload URL ever
   * names, so later writes to path cannot change the copy. The bytes hashed are the bytes
   * copied even if path is overwritten meanwhile (or ObjectChangedError). Undefined when
   * nothing is stored at path.
   */
  freeze(path: string): Promise<FrozenObject | undefined>;
  /**
   * Resolves when the store answers within timeoutMs (S3: a HeadBucket; local: the blobs
   * directory is there and writable), for GET /readyz; rejects with why not.
   */
  probe(timeoutMs: number): Promise<void>;

  /**
   * Multipart uploads, as S3 does them: start one for path, sign a URL per part (each URL
   * takes one PUT of exactly its part's size and answers the part's ETag), then complete
   * with every part's ETag in order: the object appears at path whole, or not at all.
   */
  startMultipart(path: string): Promise<string>;
  /** A URL that takes one PUT of exactly `size` bytes as part `partNumber` (1-based) until expiresIn seconds pass. */
  signPart(path: string, uploadId: string, part: { partNumber: number; size: number }, options: { expiresIn: number }): Promise<string>;
  /**
   * Joins the parts into the object at path. InvalidPartsError when a part is missing, holds
   * other bytes than its ETag names, or has another size than expected; UploadNotFoundError
   * when the upload was completed, aborted or swept.
   */
  completeMultipart(path: string, uploadId: string, parts: ExpectedPart[]): Promise<StoredObject>;
  /** Drops the upload and its parts; nothing is left to complete. Unknown uploads: UploadNotFoundError. */
  abortMultipart(path: string, uploadId: string): Promise<void>;
  /** Aborts every multipart upload started before `startedBefore`; returns how many. */
  sweepMultipart(startedBefore: Date): Promise<number>;
}

export interface ExpectedPart {
  partNumber: number;
  etag: string;
  /** The size the part's URL was signed for. */
  size: number;
}

/** A completion whose parts do not match what landed; answered 400 naming the part. */
export class InvalidPartsError extends Error {
  constructor(readonly partNumber: number, reason: string) {
    super(`part ${partNumber} ${reason}`);
  }
}

/** The multipart upload is not there: completed, aborted, swept, or never started. */
export class UploadNotFoundError extends Error {
  constructor(readonly uploadId: string) {
    super(`no multipart upload ${uploadId} is in progress`);
  }
}

/** S3's bounds: parts of 5 MiB at least (but the last), 10,000 parts, 5 GiB in one PUT. */
export const MIN_PART_SIZE = 5 * 1024 ** 2;
export const MAX_PARTS = 10_000;
export const MAX_SINGLE_PUT_BYTES = 5 * 1024 ** 3;
/** Abandoned multipart uploads are swept after this long (docs/decisions.md). */
export const MULTIPART_ABANDONED_AFTER_MS = 7 * 24 * 3600 * 1000;

/**
 * The object store did not answer (connection refused or reset, a timeout, or a 5xx left
 * after the SDK's retries). Answered 503 service_unavailable with retry-after, naming storage.
 */
export class StorageUnavailableError extends DependencyUnavailable {
  readonly dependency = 'object storage';

  constructor(cause: unknown) {
    super(`object storage is unavailable: ${describeFault(cause)}`, { cause });
  }
}

/** Rejects with a timeout error unless work settles within ms. */
export async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${ms} ms`), { name: 'TimeoutError' })), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** "ECONNREFUSED connect ECONNREFUSED 127.0.0.1:9000", "TimeoutError ...", "503 ServiceUnavailable". */
export function describeFault(error: unknown): string {
  const e = error as { name?: string; code?: string; message?: string; errors?: unknown[]; $metadata?: { httpStatusCode?: number } };
  const status = e?.$metadata?.httpStatusCode;
  const inner = Array.isArray(e?.errors) && e.errors.length ? (e.errors[0] as { message?: string }).message : undefined;
  return [status && status >= 500 ? String(status) : e?.code ?? e?.name, inner ?? e?.message].filter(Boolean).join(' ');
}

/** The object changed while it was being frozen; nothing was published. */
export class ObjectChangedError extends Error {
  constructor(readonly path: string) {
    super(`the object at ${path} changed while it was being copied`);
  }
}

export const BLOB_STORE = Symbol('BlobStore');

/** Upload URLs live long enough for a multi-GiB PUT on a slow line; see docs/decisions.md. */
export const UPLOAD_URL_TTL_SECONDS = 3600;
/** Download and shard URLs (spec part 8). */
export const DOWNLOAD_URL_TTL_SECONDS = 120;

const PUBLISHED_PREFIX = 'published/';

export function publishedPath(sha256: string): string {
  return `${PUBLISHED_PREFIX}${sha256}`;
}

/** Published keys are written by freeze() only: adapters refuse to sign an upload URL for one. */
export function assertUploadable(path: string): void {
  if (path.startsWith(PUBLISHED_PREFIX)) throw new Error(`published objects cannot be uploaded to: ${path}`);
}

/** Passes bytes through unchanged while counting them and taking their SHA-256 (read after the end). */
export class Digest extends Transform {
  size = 0;
  sha256 = '';
  private readonly hash = createHash('sha256');

  _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.size += chunk.length;
    this.hash.update(chunk);
    callback(null, chunk);
  }

  _flush(callback: TransformCallback): void {
    this.sha256 = this.hash.digest('hex');
    callback();
  }
}

/** The content-disposition a download is served with: an ASCII fallback name plus the exact one (RFC 6266). */
export function contentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

const SAFE_SEGMENT = /^[A-Za-z0-9._-]+$/;

/** True for a relative key of safe segments, none of them "." or "..". */
export function isSafeObjectPath(path: string): boolean {
  const segments = path.split('/');
  return segments.every((s) => SAFE_SEGMENT.test(s) && s !== '.' && s !== '..');
}
