import { createHmac } from 'node:crypto';

/**
 * The svc-signature header of spec part 6: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">,
 * one v1 per secret, the current one first: during a rotation the old secret signs too
 * (Stripe's scheme), and a receiver accepts any v1 that matches its secret.
 */
export function signatureHeader(secrets: string | readonly string[], rawBody: string, timestamp = Math.floor(Date.now() / 1000)): string {
  const digests = (typeof secrets === 'string' ? [secrets] : secrets).map(
    (secret) => `v1=${createHmac('sha256', secret).update(`${timestamp}.${rawBody}`, 'utf8').digest('hex')}`,
  );
  return [`t=${timestamp}`, ...digests].join(',');
}
