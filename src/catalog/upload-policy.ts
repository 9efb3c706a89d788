import { isSafeObjectPath } from '../storage/blob-store';
import { ApiError, Errors } from '../platform/errors';

/** decisions.md section 5: the upload extension allowlist, published by GET /v1/uploads. */
export const ALLOWED_EXTENSIONS = [
  '.onnx', '.pt', '.pth', '.safetensors', '.tflite', '.engine', '.zip', '.tar', '.gz', '.tgz', '.bag', '.mcap',
  '.db3', '.csv', '.json', '.jsonl', '.parquet', '.h5', '.hdf5', '.npz', '.yaml', '.urdf', '.xacro', '.usd',
  '.usda', '.usdz', '.stl', '.obj', '.dae', '.pcd', '.ply', '.png', '.jpg',
  // Issue 41: the files robotics data comes in (videos, TFRecords, arrays, docs, robot and scene descriptions, Arrow).
  '.mp4', '.webm', '.mkv', '.tfrecord', '.npy', '.md', '.txt', '.xml', '.sdf', '.mjcf', '.arrow', '.feather', '.msgpack',
] as const;

const MAX_FILE_NAME = 200;

/**
 * The last path component of a client-supplied name, reduced to [A-Za-z0-9._-]: no
 * separator or ".." can survive, so the storage path built from it stays in its prefix.
 */
export function sanitizeFileName(raw: string): string {
  const base = raw.split(/[\\/]/).pop() ?? '';
  const cleaned = base
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/\.{2,}/g, '.')
    .replace(/^[.-]+/, '');
  if (!cleaned || cleaned.startsWith('.')) throw Errors.validationFailed('Invalid field "file_name": no usable characters.');
  if (cleaned.length <= MAX_FILE_NAME) return cleaned;
  const extension = extensionOf(cleaned);
  return cleaned.slice(0, MAX_FILE_NAME - extension.length) + extension;
}

/** ".onnx" for "policy.ONNX"; "" when there is none. */
export function extensionOf(fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  return dot > 0 ? fileName.slice(dot).toLowerCase() : '';
}

/** Accepts "onnx" or ".onnx" (decisions section 5) and returns ".onnx". */
export function normalizeExtension(raw: string): string {
  const trimmed = raw.trim().toLowerCase();
  return trimmed.startsWith('.') ? trimmed : `.${trimmed}`;
}

export function assertAllowedExtension(extension: string, field: string): void {
  if (!(ALLOWED_EXTENSIONS as readonly string[]).includes(extension)) {
    throw Errors.validationFailed(
      `Invalid field "${field}": extension "${extension || '(none)'}" is not allowed; see GET /v1/uploads for the allowlist.`,
    );
  }
}

export function assertWithinMaxBytes(size: number, maxBytes: number, field: string): void {
  if (size > maxBytes) throw Errors.validationFailed(`Invalid field "${field}": ${size} bytes is over the ${maxBytes} byte limit.`);
}

export function userPrefix(accountId: string): string {
  return `user/${accountId}/`;
}

export function uploadPath(accountId: string, fileName: string, now = new Date()): string {
  return `${userPrefix(accountId)}${Math.floor(now.getTime() / 1000)}-${fileName}`;
}

/** Spec part 4 rule 2: the path must sit under the caller's own prefix, with no way out of it. */
export function assertOwnStoragePath(accountId: string, storagePath: string): void {
  if (!storagePath.startsWith(userPrefix(accountId)) || !isSafeObjectPath(storagePath) || storagePath === userPrefix(accountId)) {
    throw new ApiError(400, 'invalid_storage_path', `storage_path must be an object under your own prefix "${userPrefix(accountId)}".`);
  }
}
