import { createHash } from 'node:crypto';

/**
 * mulberry32: a tiny, well-known 32-bit PRNG. Math.random cannot be seeded, and the
 * sandbox engines must be reproducible: the same chat request gives the same text, the
 * same plan the same initial weights (same bytes).
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A 31-bit seed derived from text (a prompt and its answers). */
export function seedFrom(text: string): number {
  return createHash('sha256').update(text).digest().readUInt32BE(0) & 0x7fffffff;
}
