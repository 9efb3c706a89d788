import { createHash } from 'node:crypto';
import { randomBase62 } from '../platform/ids';

/** An operator token: "op_" and 40 base62 characters; only its SHA-256 is stored. */
export function generateOperatorToken(): { token: string; tokenHash: string } {
  const token = `op_${randomBase62(40)}`;
  return { token, tokenHash: hashOperatorToken(token) };
}

/**
 * SHA-256 (hex) of a token. The read model is looked up by this hash: a token of 238 random
 * bits cannot be guessed from the time a lookup takes, and the hash reveals nothing of it.
 */
export function hashOperatorToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Lowercase letters, digits, dots, hyphens and underscores, starting with a letter: a person's handle. */
export const OPERATOR_NAME = /^[a-z][a-z0-9._-]{0,62}$/;
