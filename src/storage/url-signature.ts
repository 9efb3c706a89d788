import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The local store's signed URLs: an HMAC-SHA256 over the method, the object path, the
 * expiry, the size cap and (GET) the file name it is served as, so changing any of them
 * (or replaying a GET URL as a PUT) breaks the signature.
 */
export interface SignedFields {
  method: 'GET' | 'PUT';
  path: string;
  /** Unix seconds after which the URL is refused. */
  expires: number;
  /** PUT only: the most bytes the upload may carry (0 for GET). */
  maxBytes: number;
  /** GET only: the name in content-disposition (published objects are stored under their hash). */
  fileName?: string;
}

export function sign(secret: string, fields: SignedFields): string {
  const signed = `${fields.method}\n${fields.path}\n${fields.expires}\n${fields.maxBytes}`;
  return createHmac('sha256', secret)
    .update(fields.method === 'GET' ? `${signed}\n${fields.fileName ?? ''}` : signed)
    .digest('hex');
}

export type SignatureCheck = 'valid' | 'invalid' | 'expired';

export function verify(secret: string, fields: SignedFields, signature: string, nowSeconds: number): SignatureCheck {
  const expected = Buffer.from(sign(secret, fields), 'hex');
  const given = Buffer.from(/^[0-9a-f]{64}$/.test(signature) ? signature : '', 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
  // Checked after the signature so a forged expiry reads as tampering, not as expiry.
  return nowSeconds > fields.expires ? 'expired' : 'valid';
}
