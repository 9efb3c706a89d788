import {
  AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CopyObjectCommand, CopyObjectCommandOutput, CreateMultipartUploadCommand,
  DeleteObjectCommand, GetObjectCommand, GetObjectCommandOutput, HeadBucketCommand, HeadObjectCommand, ListMultipartUploadsCommand,
  ListObjectsV2Command, ListPartsCommand, Part, PutObjectCommand, S3Client, UploadPartCommand, UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3Settings } from '../config/settings';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  assertUploadable, BlobStore, contentDisposition, Digest, ExpectedPart, FrozenObject, InvalidPartsError, MAX_SINGLE_PUT_BYTES, ObjectChangedError,
  ObjectDigest, publishedPath, SignedUpload, StorageUnavailableError, StoredObject, UploadNotFoundError, within,
} from './blob-store';
import { createHash } from 'node:crypto';

const isNotFound = (error: unknown): boolean => {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NotFound' || e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404;
};

const isNoSuchUpload = (error: unknown): boolean => {
  const e = error as { name?: string; Code?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchUpload' || e.Code === 'NoSuchUpload' || e.$metadata?.httpStatusCode === 404;
};

/**
 * How the freeze copies: one CopyObject up to singleMaxBytes (S3 takes 5 GiB), above that a
 * multipart copy in ranges of partSize (UploadPartCopy takes up to 5 GiB a part),
 * COPY_PARALLEL ranges at a time. Tests lower both to copy small objects in ranges.
 */
export interface CopyLimits {
  singleMaxBytes: number;
  partSize: number;
}

const COPY_LIMITS: CopyLimits = { singleMaxBytes: MAX_SINGLE_PUT_BYTES, partSize: 1024 ** 3 };
const COPY_PARALLEL = 4;
const CHECKSUM_HEADER = 'x-amz-checksum-sha256';

/**
 * The SDK signs with its clock corrected by the offset it last saw in a response's Date,
 * and retries a RequestTimeTooSkewed refusal only when the corrected offset is large: after
 * the host's clock steps back (NTP), the first request of each client fails once with its
 * offset already put right. Sent again here, that once.
 */
async function skewSafe<T>(send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    if ((error as { name?: string }).name !== 'RequestTimeTooSkewed') throw error;
    return send();
  }
}

/** Network-level failures: the server is not there, went away, or does not answer in time. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN',
  'ERR_STREAM_PREMATURE_CLOSE',
]);

/**
 * True when the server could not be reached or did not answer (as opposed to answering with
 * a refusal): connection refused or reset, a timeout, or a 5xx the SDK's retries left.
 */
function isStorageFault(error: unknown, depth = 0): boolean {
  const e = error as { name?: string; code?: string; errors?: unknown[]; cause?: unknown; $metadata?: { httpStatusCode?: number } } | undefined;
  if (!e || typeof e !== 'object' || depth > 3) return false;
  if ((e.$metadata?.httpStatusCode ?? 0) >= 500) return true;
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return true;
  if (typeof e.code === 'string' && CONNECTION_CODES.has(e.code)) return true;
  // Dual-stack connects fail with an AggregateError of each address's refusal.
  if (Array.isArray(e.errors) && e.errors.some((inner) => isStorageFault(inner, depth + 1))) return true;
  if (e.cause !== undefined && isStorageFault(e.cause, depth + 1)) return true;
  // The SDK's retry middleware keeps only the text of an error that is not an instance of
  // this realm's Error ("AWS SDK error wrapper for Error: connect ECONNREFUSED ..."), as
  // Node's socket errors are not under a VM context (jest): the code is read from the text.
  const message = (e as { message?: unknown }).message;
  return typeof message === 'string' && message.startsWith('AWS SDK error wrapper for') && [...CONNECTION_CODES].some((code) => message.includes(code));
}

/** Runs an S3 call; a fault of the server (not a refusal) becomes StorageUnavailableError, answered 503. */
async function reaching<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw isStorageFault(error) ? new StorageUnavailableError(error) : error;
  }
}

/**
 * Bounds on each attempt, so a request meets a stopped or silent server with a 503 within
 * seconds rather than hanging: connecting may take CONNECT_TIMEOUT_MS, and the response's
 * headers may take RESPONSE_TIMEOUT_MS (not the body: a GET streams as long as bytes flow).
 * A PUT's own body and a server-side copy (which the server may answer only when done) are
 * bounded by IDLE_TIMEOUT_MS of silence instead; AWS and RGW keep a long copy's connection
 * alive with whitespace. The SDK's standard retries (MAX_ATTEMPTS, backoff from 100 ms) come
 * on top: a refused connection is answered in well under a second, a silent server in ~16 s.
 */
const CONNECT_TIMEOUT_MS = 3_000;
const RESPONSE_TIMEOUT_MS = 5_000;
const IDLE_TIMEOUT_MS = 15_000;
/** Per call: no bound on the time to the response's headers (IDLE_TIMEOUT_MS still holds). */
const UNTIL_IDLE = { requestTimeout: 0 };
const MAX_ATTEMPTS = 3;

/**
 * Objects in an S3 bucket (or any S3-protocol server), credentials from AWS_ACCESS_KEY_ID /
 * AWS_SECRET_ACCESS_KEY or the standard provider chain. A presigned PUT cannot cap a body's
 * size by itself, so the upload URL signs the content-length header: S3 refuses (403) a body
 * of any other length, and the publish step re-checks the landed size against the declared
 * one. Tested against s3rver (no signature checks) and, in the S3 pass of .ci/run, against
 * Ceph's RADOS Gateway (signatures, expiry, conditional copy).
 */
export class S3BlobStore implements BlobStore {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly copyLimits = COPY_LIMITS,
    /** Signs the URLs handed to clients: the same as `client` unless S3_PUBLIC_ENDPOINT names another address of the server. */
    private readonly signer: S3Client = client,
  ) {}

  static fromSettings(settings: S3Settings): S3BlobStore {
    const client = S3BlobStore.client(settings, settings.endpoint);
    const signer = settings.publicEndpoint ? S3BlobStore.client(settings, settings.publicEndpoint) : client;
    return new S3BlobStore(client, settings.bucket, COPY_LIMITS, signer);
  }

  private static client(settings: S3Settings, endpoint: string | undefined): S3Client {
    return new S3Client({
      region: settings.region,
      endpoint,
      forcePathStyle: settings.forcePathStyle,
      credentials: settings.credentials,
      // Otherwise the SDK presigns a checksum of an empty body into every PUT URL, and S3
      // refuses the real bytes.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      maxAttempts: MAX_ATTEMPTS,
      requestHandler: { connectionTimeout: CONNECT_TIMEOUT_MS, requestTimeout: RESPONSE_TIMEOUT_MS, throwOnRequestTimeout: true, socketTimeout: IDLE_TIMEOUT_MS },
    });
  }

  /**
   * The URL's signature covers content-length (and content-type when one is given), so S3
   * itself refuses a PUT of another size or type, and any PUT after expiresIn. A sha256 is
   * bound as x-amz-checksum-sha256: signed, and kept a header (the presigner would otherwise
   * hoist it into the query string, where S3 does not check it: aws-sdk-js-v3 #3906), so
   * the PUT must send it and the gateway refuses (400 BadDigest) bytes of another hash.
   */
  async signUpload(path: string, options: { expiresIn: number; maxBytes: number; contentType?: string; sha256?: string }): Promise<SignedUpload> {
    assertUploadable(path);
    const checksum = options.sha256 && Buffer.from(options.sha256, 'hex').toString('base64');
    const signed = ['content-length', ...(options.contentType ? ['content-type'] : []), ...(checksum ? [CHECKSUM_HEADER] : [])];
    const url = await getSignedUrl(
      this.signer,
      new PutObjectCommand({ Bucket: this.bucket, Key: path, ContentLength: options.maxBytes, ContentType: options.contentType, ...(checksum && { ChecksumSHA256: checksum }) }),
      { expiresIn: options.expiresIn, signableHeaders: new Set(signed), ...(checksum && { unhoistableHeaders: new Set([CHECKSUM_HEADER]) }) },
    );
    return {
      url,
      token: new URL(url).searchParams.get('X-Amz-Signature') ?? '',
      expiresIn: options.expiresIn,
      ...(checksum && { headers: { [CHECKSUM_HEADER]: checksum } }),
    };
  }

  /** One GET, hashed as it streams; the version is the ETag of the bytes that came. */
  async digest(path: string): Promise<ObjectDigest | undefined> {
    let source;
    try {
      source = await this.send(() => this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: path })));
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
    const digest = new Digest();
    await reaching(() => pipeline(source.Body as Readable, digest, new Writable({ write: (_chunk, _encoding, done) => done() })));
    return { path, size: digest.size, sha256: digest.sha256, version: unquoted(source.ETag) ?? '' };
  }

  signDownload(path: string, options: { expiresIn: number; fileName: string }): Promise<string> {
    return getSignedUrl(
      this.signer,
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: path,
        ResponseContentDisposition: contentDisposition(options.fileName),
      }),
      { expiresIn: options.expiresIn },
    );
  }

  async put(path: string, bytes: Uint8Array): Promise<StoredObject> {
    await this.send(() => this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: path, Body: bytes, ContentLength: bytes.length }), UNTIL_IDLE));
    return { path, size: bytes.length };
  }

  async stat(path: string): Promise<StoredObject | undefined> {
    try {
      const head = await this.send(() => this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: path })));
      return { path, size: head.ContentLength ?? 0, version: unquoted(head.ETag) };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async readRange(path: string, offset: number, length: number): Promise<Uint8Array | undefined> {
    if (length <= 0) return new Uint8Array(0);
    try {
      const range = `bytes=${offset}-${offset + length - 1}`;
      const object = await this.send(() => this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: path, Range: range })));
      return await reaching(() => (object.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray());
    } catch (error) {
      if (isNotFound(error)) return undefined;
      // A range starting at or past the end: S3 answers 416; the object is there, the bytes are not.
      if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 416) return new Uint8Array(0);
      throw error;
    }
  }

  /**
   * Hashes the object as one GET streams it, then copies it server-side on condition that
   * its ETag is still the one hashed, so the copy holds the bytes hashed or fails. The
   * condition goes as x-amz-copy-source-if-match (AWS, MinIO, R2) and as x-amz-copy-if-match
   * too (Ceph RGW reads only that one, tracker 40808); a server that honours neither is
   * caught afterwards by the copy's ETag. Objects above one CopyObject's 5 GiB are copied in
   * ranges (copyInParts).
   */
  async freeze(path: string): Promise<FrozenObject | undefined> {
    let source;
    try {
      source = await this.send(() => this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: path })));
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
    const digest = new Digest();
    const inParts = (source.ContentLength ?? 0) > this.copyLimits.singleMaxBytes;
    const ranges = new RangeDigests(this.copyLimits.partSize);
    const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => (inParts && ranges.update(chunk), done()) });
    // The server may go away while the body streams.
    await reaching(() => pipeline(source.Body as Readable, digest, sink));
    const frozen = publishedPath(digest.sha256);
    // Keys name their bytes: bytes frozen before are not copied again, and a copy that went
    // wrong (below) can never have replaced an object another listing publishes.
    const already = await this.stat(frozen);
    if (already?.size === digest.size) return { path: frozen, size: digest.size, sha256: digest.sha256 };
    if (inParts) {
      await this.copyInParts(path, frozen, source.ETag, digest.size, ranges.multipartEtag());
      return { path: frozen, size: digest.size, sha256: digest.sha256 };
    }
    // Keys are safe segments ([A-Za-z0-9._-]), so the copy source needs no encoding.
    const copy = withCephCopyCondition(
      new CopyObjectCommand({ Bucket: this.bucket, Key: frozen, CopySource: `${this.bucket}/${path}`, CopySourceIfMatch: source.ETag }),
      source.ETag,
    );
    let copied;
    try {
      copied = await this.send(() => this.client.send(copy, UNTIL_IDLE));
    } catch (error) {
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === 412 || isNotFound(error)) throw new ObjectChangedError(path);
      throw error;
    }
    if (copiedOtherBytes(source, copied)) {
      await this.removeCopy(frozen, copied.CopyObjectResult?.ETag);
      throw new ObjectChangedError(path);
    }
    return { path: frozen, size: digest.size, sha256: digest.sha256 };
  }

  /**
   * The copy of an object above 5 GiB: ranges copied server-side on the same condition as a
   * single copy, and the result's ETag, which S3 derives from each range's MD5, compared with
   * the one computed from the bytes hashed; on any other bytes the copy is removed.
   */
  private async copyInParts(path: string, frozen: string, sourceEtag: string | undefined, size: number, expectedEtag: string): Promise<void> {
    const started = await this.send(() => this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: frozen })));
    const uploadId = started.UploadId!;
    const { partSize } = this.copyLimits;
    const ranges = Array.from({ length: Math.ceil(size / partSize) }, (_, i) => ({
      partNumber: i + 1,
      range: `bytes=${i * partSize}-${Math.min(size, (i + 1) * partSize) - 1}`,
    }));
    const copied: Part[] = [];
    try {
      await inParallel(ranges, COPY_PARALLEL, async ({ partNumber, range }) => {
        const part = withCephCopyCondition(
          new UploadPartCopyCommand({
            Bucket: this.bucket, Key: frozen, UploadId: uploadId, PartNumber: partNumber,
            CopySource: `${this.bucket}/${path}`, CopySourceRange: range, CopySourceIfMatch: sourceEtag,
          }),
          sourceEtag,
        );
        const result = await this.send(() => this.client.send(part, UNTIL_IDLE));
        copied.push({ PartNumber: partNumber, ETag: result.CopyPartResult?.ETag });
      });
    } catch (error) {
      await this.abortMultipart(frozen, uploadId).catch(() => undefined);
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === 412 || isNotFound(error)) throw new ObjectChangedError(path);
      throw error;
    }
    copied.sort((a, b) => a.PartNumber! - b.PartNumber!);
    let copy;
    try {
      await this.send(() =>
        this.client.send(new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: frozen, UploadId: uploadId, MultipartUpload: { Parts: copied } }), UNTIL_IDLE),
      );
      // Read from the object, not the completion's answer, which Ceph RGW leaves empty.
      copy = await this.send(() => this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: frozen })));
    } catch (error) {
      // Not completed: dropped. Completed but not read: a copy that cannot be checked is not kept.
      await this.abortMultipart(frozen, uploadId).catch(() => undefined);
      await this.send(() => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: frozen }))).catch(() => undefined);
      throw error;
    }
    // SSE-KMS and SSE-C ETags are not MD5s: there only the copy condition holds, as for one copy.
    const digestEtag = !copy.SSECustomerAlgorithm && !String(copy.ServerSideEncryption ?? '').startsWith('aws:kms');
    if (digestEtag && unquoted(copy.ETag) !== expectedEtag) {
      await this.removeCopy(frozen, copy.ETag);
      throw new ObjectChangedError(path);
    }
  }

  /** Deletes a copy that holds other bytes than its key names, unless another freeze replaced it meanwhile. */
  private async removeCopy(frozen: string, etag: string | undefined): Promise<void> {
    const head = await this.send(() => this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: frozen }))).catch(() => undefined);
    if (head && unquoted(head.ETag) === unquoted(etag)) await this.send(() => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: frozen })));
  }

  /** HeadBucket, aborted after timeoutMs: the bucket is there and these credentials reach it. */
  async probe(timeoutMs: number): Promise<void> {
    const abortSignal = AbortSignal.timeout(timeoutMs);
    try {
      await within(timeoutMs + 100, this.client.send(new HeadBucketCommand({ Bucket: this.bucket }), { abortSignal }));
    } catch (error) {
      if (abortSignal.aborted) throw Object.assign(new Error(`no answer within ${timeoutMs} ms`), { name: 'TimeoutError' });
      throw error;
    }
  }

  async startMultipart(path: string): Promise<string> {
    assertUploadable(path);
    const started = await this.send(() => this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: path })));
    return started.UploadId!;
  }

  /** Signed with the part's content-length, so S3 itself refuses a part of any other size. */
  signPart(path: string, uploadId: string, part: { partNumber: number; size: number }, options: { expiresIn: number }): Promise<string> {
    assertUploadable(path);
    return getSignedUrl(
      this.signer,
      new UploadPartCommand({ Bucket: this.bucket, Key: path, UploadId: uploadId, PartNumber: part.partNumber, ContentLength: part.size }),
      { expiresIn: options.expiresIn, signableHeaders: new Set(['content-length']) },
    );
  }

  /**
   * The landed parts are listed and checked first, so a refusal names its part (S3's own
   * InvalidPart does not); S3 checks the ETags again as it completes.
   */
  async completeMultipart(path: string, uploadId: string, parts: ExpectedPart[]): Promise<StoredObject> {
    await this.checkParts(path, uploadId, parts);
    const complete = new CompleteMultipartUploadCommand({
      Bucket: this.bucket, Key: path, UploadId: uploadId,
      MultipartUpload: { Parts: parts.map((p) => ({ PartNumber: p.partNumber, ETag: p.etag })) },
    });
    try {
      await this.send(() => this.client.send(complete, UNTIL_IDLE));
    } catch (error) {
      if (isNoSuchUpload(error)) throw new UploadNotFoundError(uploadId);
      // A part PUT again since the check: checked again, to name it.
      if ((error as { name?: string }).name === 'InvalidPart') await this.checkParts(path, uploadId, parts);
      throw error;
    }
    return { path, size: parts.reduce((sum, p) => sum + p.size, 0) };
  }

  /** InvalidPartsError naming the first part whose landed ETag or size is not the expected one. */
  private async checkParts(path: string, uploadId: string, parts: ExpectedPart[]): Promise<void> {
    const landed = new Map((await this.listParts(path, uploadId)).map((p) => [p.PartNumber, p]));
    for (const part of parts) {
      const found = landed.get(part.partNumber);
      if (unquoted(found?.ETag) !== unquoted(part.etag)) throw new InvalidPartsError(part.partNumber, `has no landed bytes with ETag ${part.etag}`);
      if (found!.Size !== part.size) throw new InvalidPartsError(part.partNumber, `is ${found!.Size} bytes, not the ${part.size} its URL was signed for`);
    }
  }

  private async listParts(path: string, uploadId: string): Promise<Part[]> {
    const parts: Part[] = [];
    let marker: string | undefined;
    try {
      do {
        const page = await this.send(() => this.client.send(new ListPartsCommand({ Bucket: this.bucket, Key: path, UploadId: uploadId, PartNumberMarker: marker })));
        parts.push(...(page.Parts ?? []));
        marker = page.IsTruncated ? page.NextPartNumberMarker : undefined;
      } while (marker);
    } catch (error) {
      if (isNoSuchUpload(error)) throw new UploadNotFoundError(uploadId);
      throw error;
    }
    return parts;
  }

  async abortMultipart(path: string, uploadId: string): Promise<void> {
    try {
      await this.send(() => this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: path, UploadId: uploadId })));
    } catch (error) {
      if (isNoSuchUpload(error)) throw new UploadNotFoundError(uploadId);
      throw error;
    }
  }

  /** Where the bucket has no AbortIncompleteMultipartUpload lifecycle rule, this is it. */
  async sweepMultipart(startedBefore: Date): Promise<number> {
    let swept = 0;
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    do {
      const page = await this.send(() =>
        this.client.send(new ListMultipartUploadsCommand({ Bucket: this.bucket, KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker })),
      );
      for (const upload of page.Uploads ?? []) {
        if (!upload.Key || !upload.UploadId || !upload.Initiated || upload.Initiated >= startedBefore) continue;
        await this.abortMultipart(upload.Key, upload.UploadId).catch((error) => {
          if (!(error instanceof UploadNotFoundError)) throw error;
        });
        swept++;
      }
      [keyMarker, uploadIdMarker] = page.IsTruncated ? [page.NextKeyMarker, page.NextUploadIdMarker] : [undefined, undefined];
    } while (keyMarker);
    return swept;
  }

  /** One S3 call: RequestTimeTooSkewed sent again once; a fault of the server becomes StorageUnavailableError. */
  private send<T>(call: () => Promise<T>): Promise<T> {
    return reaching(() => skewSafe(call));
  }

  async list(prefix: string): Promise<StoredObject[]> {
    const found: StoredObject[] = [];
    let token: string | undefined;
    do {
      const page = await this.send(() => this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token })));
      for (const object of page.Contents ?? []) {
        if (object.Key) found.push({ path: object.Key, size: object.Size ?? 0, version: unquoted(object.ETag) });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }
}

/**
 * Sends the copy condition as x-amz-copy-if-match too: Ceph RGW reads only that one
 * (tracker 40808) and ignores x-amz-copy-source-if-match.
 */
function withCephCopyCondition<C extends CopyObjectCommand | UploadPartCopyCommand>(command: C, etag: string | undefined): C {
  // The two commands' stacks differ only in their input and output types, unused here.
  (command.middlewareStack as CopyObjectCommand['middlewareStack']).add(
    (next) => async (args) => {
      const request = args.request as { headers?: Record<string, string> };
      if (request.headers && etag) request.headers['x-amz-copy-if-match'] = etag;
      return next(args);
    },
    { step: 'build', name: 'copyIfMatchForCeph' },
  );
  return command;
}

/** Runs work on every item, at most `parallel` at a time; the first failure rejects once the running ones settle. */
async function inParallel<T>(items: T[], parallel: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  let failed = false;
  const worker = async () => {
    for (let next = queue.shift(); next && !failed; next = queue.shift()) {
      try {
        await work(next);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  const results = await Promise.allSettled(Array.from({ length: Math.min(parallel, items.length) }, worker));
  const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (rejected) throw rejected.reason;
}

/**
 * The MD5 of each fixed-size range of a stream, from which the ETag S3 gives a multipart
 * object follows: the MD5 of the ranges' binary MD5s, then "-" and their count.
 */
class RangeDigests {
  private readonly digests: Buffer[] = [];
  private hash = createHash('md5');
  private filled = 0;

  constructor(private readonly rangeSize: number) {}

  update(chunk: Buffer): void {
    for (let at = 0; at < chunk.length; ) {
      const take = Math.min(chunk.length - at, this.rangeSize - this.filled);
      this.hash.update(chunk.subarray(at, at + take));
      this.filled += take;
      at += take;
      if (this.filled === this.rangeSize) this.next();
    }
  }

  multipartEtag(): string {
    if (this.filled > 0) this.next();
    return `${createHash('md5').update(Buffer.concat(this.digests)).digest('hex')}-${this.digests.length}`;
  }

  private next(): void {
    this.digests.push(this.hash.digest());
    this.hash = createHash('md5');
    this.filled = 0;
  }
}

/** ETags come quoted in headers, and bare in some servers' CopyObjectResult XML (Ceph RGW). */
const unquoted = (etag: string | undefined) => etag?.replace(/^"|"$/g, '');

/**
 * The copy's ETag tells whether it holds the bytes hashed where ETags are content digests:
 * a single-part object stored unencrypted or with SSE-S3 has the MD5 of its bytes, the same
 * for the source and the copy. A multipart source's ETag ("...-N") and SSE-KMS or SSE-C
 * ETags differ between copies of the same bytes, so there only the copy condition holds.
 */
function copiedOtherBytes(source: GetObjectCommandOutput, copied: CopyObjectCommandOutput): boolean {
  const before = unquoted(source.ETag);
  const after = unquoted(copied.CopyObjectResult?.ETag);
  if (!before || !after || before.includes('-')) return false;
  if (source.SSECustomerAlgorithm || copied.SSECustomerAlgorithm || String(copied.ServerSideEncryption ?? '').startsWith('aws:kms')) return false;
  return before !== after;
}
