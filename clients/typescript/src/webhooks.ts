/**
 * Verifying a webhook delivery (docs/webhooks.md): the `svc-signature` header is
 * `t=<unix seconds>,v1=<hex>[,v1=<hex>...]`, each `v1` the HMAC-SHA256, keyed with the
 * endpoint's secret, of `<t>.<raw body>` (Stripe's scheme; several `v1` while a rolled
 * secret still signs). The same checks as the service's own verifier.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { SignatureVerificationError } from './errors';

export const SIGNATURE_HEADER = 'svc-signature';
export const DEFAULT_TOLERANCE_SECONDS = 300;

export interface ConstructEventOptions {
  /** Allowed distance between the header's timestamp and now, in seconds (default 300). */
  tolerance?: number;
  /** The current Unix time in seconds (tests). */
  now?: number;
}

/** An event as delivered: `{ id, type, created, data, ... }`. */
export interface WebhookEvent<D = Record<string, any>> {
  id: string;
  type: string;
  created: number;
  data: D;
  [extra: string]: unknown;
}

const bytesOf = (payload: string | Uint8Array) => (typeof payload === 'string' ? Buffer.from(payload, 'utf8') : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength));

function signatureOf(secret: string, timestamp: number, body: Buffer): Buffer {
  return createHmac('sha256', secret).update(`${timestamp}.`, 'utf8').update(body).digest();
}

/**
 * The event of a delivery, verified. `rawBody` must be the body's bytes as received (a
 * Buffer, or the string of them): re-serialized JSON does not verify. `header` is the
 * `svc-signature` header's value. Throws SignatureVerificationError (answer it 400).
 */
export function constructEvent<D = Record<string, any>>(
  rawBody: string | Uint8Array,
  header: string | string[] | undefined | null,
  secret: string,
  options: ConstructEventOptions = {},
): WebhookEvent<D> {
  if (typeof header !== 'string' || !header) throw new SignatureVerificationError(`missing ${SIGNATURE_HEADER} header`);
  if (!secret) throw new SignatureVerificationError('no secret to verify with');
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const [key, value] = part.trim().split('=', 2);
    if (key === 't' && /^\d+$/.test(value ?? '')) timestamp = Number(value);
    else if (key === 'v1' && value) signatures.push(value);
  }
  if (timestamp === undefined) throw new SignatureVerificationError(`${SIGNATURE_HEADER} has no valid t`);
  if (!signatures.length) throw new SignatureVerificationError(`${SIGNATURE_HEADER} has no v1`);
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (options.tolerance ?? DEFAULT_TOLERANCE_SECONDS)) {
    throw new SignatureVerificationError(`${SIGNATURE_HEADER} timestamp is outside the tolerance`);
  }
  const body = bytesOf(rawBody);
  const expected = signatureOf(secret, timestamp, body);
  const matches = signatures.some((s) => {
    const given = Buffer.from(s, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new SignatureVerificationError('no v1 signature matches the body');
  try {
    return JSON.parse(body.toString('utf8')) as WebhookEvent<D>;
  } catch {
    throw new SignatureVerificationError('the signed body is not JSON');
  }
}

/** A `svc-signature` header for a payload, as the service signs: for tests of a receiver. */
export function sign(payload: string | Uint8Array, secret: string, timestamp = Math.floor(Date.now() / 1000)): string {
  return `t=${timestamp},v1=${signatureOf(secret, timestamp, bytesOf(payload)).toString('hex')}`;
}

export const webhooks = { constructEvent, sign, SIGNATURE_HEADER };
