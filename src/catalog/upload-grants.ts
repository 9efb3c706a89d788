import { Inject, Injectable } from '@nestjs/common';
import { SETTINGS, Settings } from '../config/settings';
import { ApiError, Errors } from '../platform/errors';
import { isMode, Mode } from '../platform/mode';
import {
  BlobStore, InvalidPartsError, MAX_PARTS, MAX_SINGLE_PUT_BYTES, MIN_PART_SIZE, UPLOAD_URL_TTL_SECONDS, UploadNotFoundError,
} from '../storage/blob-store';

/** How a file is split: every part partSize bytes but the last, which holds the rest. */
export interface PartPlan {
  fileSize: number;
  partSize: number;
  partCount: number;
}

export interface SignedPartView {
  part_number: number;
  size: number;
  url: string;
}

export interface MultipartView {
  upload_id: string;
  part_size: number;
  part_count: number;
  parts: SignedPartView[];
  expires_in: number;
}

/** The part of an upload grant that says where the bytes go (POST /v1/uploads and shard grants). */
export interface GrantView {
  /** One PUT of the whole file; null above 5 GiB, which only a multipart upload takes. */
  upload_url: string | null;
  token: string | null;
  expires_in: number;
  /** Headers the PUT to upload_url must send (S3 with a bound sha256: x-amz-checksum-sha256). */
  upload_headers?: Record<string, string>;
  multipart?: MultipartView;
}

const MiB = 1024 ** 2;

/**
 * Part URLs one answer carries: a grant has the first ones, POST /v1/uploads/parts the rest.
 * Signing costs the S3 adapter ~0.6 ms of CPU a part, and a 5 TiB file has 10,000 parts.
 */
export const PART_URLS_PER_ANSWER = 100;

/** The preferred part size, or larger (in whole MiB) where that would take more than 10,000 parts. */
export function planParts(fileSize: number, preferredPartSize: number): PartPlan {
  const partSize = Math.max(preferredPartSize, Math.ceil(fileSize / MAX_PARTS / MiB) * MiB);
  return { fileSize, partSize, partCount: Math.max(1, Math.ceil(fileSize / partSize)) };
}

const firstParts = (plan: PartPlan) => Array.from({ length: Math.min(plan.partCount, PART_URLS_PER_ANSWER) }, (_, i) => i + 1);

export function partSizeOf(plan: PartPlan, partNumber: number): number {
  return partNumber < plan.partCount ? plan.partSize : plan.fileSize - plan.partSize * (plan.partCount - 1);
}

const UPLOAD_ID_PREFIX = 'mpu_';

const noSuchUpload = () =>
  new ApiError(404, 'not_found', 'No such upload in progress: it was completed, aborted, or abandoned and swept. Start a new upload.');

/**
 * The upload_id clients hold: the store's own id with the plan it was granted, so part URLs
 * can be signed again (after expiry) and a completion checked without a record of the
 * grant. A client that edits the plan gains nothing a new grant would not give: the plan
 * is checked against the same limits, and S3 and the local store check every part.
 */
export function encodeUploadId(storeUploadId: string, plan: PartPlan, mode: Mode): string {
  return UPLOAD_ID_PREFIX + Buffer.from(JSON.stringify([storeUploadId, plan.fileSize, plan.partSize, mode])).toString('base64url');
}

/**
 * The upload an id names, for a caller in `mode`. The id carries the mode that granted it: the
 * other mode's key gets 404, as every cross-mode read does (issue 39), rather than part URLs
 * that would 404 themselves. Ids granted before the mode was recorded (three items) still work.
 */
function decodeUploadId(uploadId: string, maxBytes: number, mode: Mode): { storeUploadId: string; plan: PartPlan } {
  const invalid = () => Errors.validationFailed('Invalid field "upload_id": not an upload id this API granted.');
  if (!uploadId.startsWith(UPLOAD_ID_PREFIX)) throw invalid();
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(uploadId.slice(UPLOAD_ID_PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(decoded) || (decoded.length !== 3 && decoded.length !== 4)) throw invalid();
  const [storeUploadId, fileSize, partSize, grantedIn] = decoded as unknown[];
  if (grantedIn !== undefined && !isMode(grantedIn)) throw invalid();
  if (grantedIn !== undefined && grantedIn !== mode) throw noSuchUpload();
  const whole = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) > 0;
  if (typeof storeUploadId !== 'string' || !storeUploadId || !whole(fileSize) || !whole(partSize)) throw invalid();
  const plan: PartPlan = { fileSize, partSize, partCount: Math.ceil(fileSize / partSize) };
  if (fileSize > maxBytes || partSize < MIN_PART_SIZE || partSize > MAX_SINGLE_PUT_BYTES || plan.partCount > MAX_PARTS) throw invalid();
  return { storeUploadId, plan };
}

/**
 * Upload grants, the S3 and Hugging Face Hub way: a file up to UPLOAD_MULTIPART_THRESHOLD
 * gets one signed PUT URL; a larger one also gets a multipart upload with the signed URLs of
 * its first PART_URLS_PER_ANSWER parts, completed with the parts' ETags. The part URLs can be signed again, and the upload
 * completed or aborted, by whoever holds storage_path and upload_id and owns the path.
 */
@Injectable()
export class UploadGrants {
  constructor(@Inject(SETTINGS) private readonly settings: Settings) {}

  /**
   * With sha256, the single-PUT URL takes those bytes only (issue 41). Multipart parts are not
   * bound: S3 has no whole-object SHA-256 over parts, so a large file's sha256 is the one the
   * service computes once it landed (shard-checksums.ts), which clients compare.
   * `store` is `mode`'s view of the blob store (blobsOfMode).
   */
  async grant(store: BlobStore, mode: Mode, storagePath: string, fileSize: number, sha256?: string): Promise<GrantView> {
    const single = fileSize <= MAX_SINGLE_PUT_BYTES
      ? await store.signUpload(storagePath, { expiresIn: UPLOAD_URL_TTL_SECONDS, maxBytes: fileSize, ...(sha256 && { sha256 }) })
      : undefined;
    const view: GrantView = {
      upload_url: single?.url ?? null, token: single?.token ?? null, expires_in: UPLOAD_URL_TTL_SECONDS, ...(single?.headers && { upload_headers: single.headers }),
    };
    if (fileSize <= this.settings.uploads.multipartThresholdBytes) return view;
    const plan = planParts(fileSize, this.settings.uploads.partSizeBytes);
    const storeUploadId = await store.startMultipart(storagePath);
    return { ...view, multipart: await this.signParts(store, mode, storagePath, storeUploadId, plan, firstParts(plan)) };
  }

  /** URLs for parts of an upload in progress (the rest of a large one, or fresh ones after expiry): part_numbers, or the first ones. */
  async resign(store: BlobStore, mode: Mode, storagePath: string, uploadId: string, partNumbers?: number[]): Promise<MultipartView> {
    const { storeUploadId, plan } = decodeUploadId(uploadId, this.settings.uploads.maxBytes, mode);
    const numbers = partNumbers ?? firstParts(plan);
    numbers.forEach((n, i) => {
      if (n > plan.partCount) throw Errors.validationFailed(`Invalid field "part_numbers[${i}]": this upload has ${plan.partCount} parts.`);
    });
    return this.signParts(store, mode, storagePath, storeUploadId, plan, numbers);
  }

  /** Parts must be listed once each, in order; the store checks each one's ETag and size. */
  async complete(store: BlobStore, mode: Mode, storagePath: string, uploadId: string, parts: { part_number: number; etag: string }[]) {
    const { storeUploadId, plan } = decodeUploadId(uploadId, this.settings.uploads.maxBytes, mode);
    if (parts.length !== plan.partCount) {
      throw Errors.validationFailed(`Invalid field "parts": this upload has ${plan.partCount} parts and ${parts.length} were given.`);
    }
    parts.forEach((p, i) => {
      if (p.part_number !== i + 1) throw Errors.validationFailed(`Invalid field "parts[${i}].part_number": expected ${i + 1}; list every part once, in order.`);
    });
    const expected = parts.map((p) => ({ partNumber: p.part_number, etag: p.etag, size: partSizeOf(plan, p.part_number) }));
    try {
      const stored = await store.completeMultipart(storagePath, storeUploadId, expected);
      return { storage_path: storagePath, size: stored.size };
    } catch (error) {
      if (error instanceof InvalidPartsError) {
        throw Errors.validationFailed(`Invalid field "parts[${error.partNumber - 1}]": ${error.message}. Nothing was stored; PUT the part again and complete.`);
      }
      throw this.unknownUpload(error);
    }
  }

  async abort(store: BlobStore, mode: Mode, storagePath: string, uploadId: string) {
    const { storeUploadId } = decodeUploadId(uploadId, this.settings.uploads.maxBytes, mode);
    try {
      await store.abortMultipart(storagePath, storeUploadId);
    } catch (error) {
      throw this.unknownUpload(error);
    }
    return { storage_path: storagePath, upload_id: uploadId, aborted: true };
  }

  private async signParts(store: BlobStore, mode: Mode, storagePath: string, storeUploadId: string, plan: PartPlan, numbers: number[]): Promise<MultipartView> {
    const parts = await Promise.all(
      numbers.map(async (n) => {
        const size = partSizeOf(plan, n);
        return { part_number: n, size, url: await store.signPart(storagePath, storeUploadId, { partNumber: n, size }, { expiresIn: UPLOAD_URL_TTL_SECONDS }) };
      }),
    );
    return { upload_id: encodeUploadId(storeUploadId, plan, mode), part_size: plan.partSize, part_count: plan.partCount, parts, expires_in: UPLOAD_URL_TTL_SECONDS };
  }

  private unknownUpload(error: unknown): unknown {
    return error instanceof UploadNotFoundError ? noSuchUpload() : error;
  }
}
