import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The local store's signed URLs: an HMAC-SHA256 over the method, the object path, the
 * expiry, the size cap, (GET) the file name it is served as and (multipart parts) the
 * upload and part number, so changing any of them (or replaying a GET URL as a PUT)
 * breaks the signature.
 */
export interface SignedFields {
  method: 'GET' | 'PUT';
  path: string;
  /** Unix seconds after which the URL is refused. */
  expires: number;
  /** PUT only: the most bytes the upload may carry (0 for GET); a part's exact size. */
  maxBytes: number;
  /** GET only: the name in content-disposition (published objects are stored under their hash). */
  fileName?: string;
  /** Multipart parts only: the upload the part belongs to. */
  uploadId?: string;
  /** Multipart parts only: which part (1-based) the PUT lands as. */
  partNumber?: number;
  /** PUT only, when bound: the lowercase hex SHA-256 the bytes must have (issue 41). */
  sha256?: string;
}

export function sign(secret: string, fields: SignedFields): string {
  const lines: unknown[] = [fields.method, fields.path, fields.expires, fields.maxBytes];
  if (fields.method === 'GET') lines.push(fields.fileName ?? '');
  // Appended only when present, so URLs signed before parts existed keep their signatures;
  // labelled, so an upload id can never be read as a part number or the other way round.
  if (fields.uploadId !== undefined) lines.push(`upload_id=${fields.uploadId}`);
  if (fields.partNumber !== undefined) lines.push(`part_number=${fields.partNumber}`);
  if (fields.sha256 !== undefined) lines.push(`sha256=${fields.sha256}`);
  return createHmac('sha256', secret).update(lines.join('\n')).digest('hex');
}

export type SignatureCheck = 'valid' | 'invalid' | 'expired';

export function verify(secret: string, fields: SignedFields, signature: string, nowSeconds: number): SignatureCheck {
  const expected = Buffer.from(sign(secret, fields), 'hex');
  const given = Buffer.from(/^[0-9a-f]{64}$/.test(signature) ? signature : '', 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
  // Checked after the signature so a forged expiry reads as tampering, not as expiry.
  return nowSeconds > fields.expires ? 'expired' : 'valid';
}
