/**
 * Tamper evidence of the journal (issue 38, "Closing the books"): a hash chain over its
 * entries. An entry is one event's postings; its digest is SHA-256 of the previous entry's
 * digest and the entry's postings written canonically, so a digest vouches for every posting
 * before it. Each mode has its own chain (its own books). Pure and deterministic from the
 * events: the journal projection stores it, a rebuild gives the same digests, and
 * `svc ledger verify --digests` recomputes it from the log to name the first entry that differs.
 */
import { createHash } from 'node:crypto';
import type { Posting } from './journal';

/** The digest before a mode's first entry. */
export const GENESIS_DIGEST = '0'.repeat(64);

export interface ChainEntry {
  mode: string;
  /** 1 for the mode's first entry, then one more each entry. */
  seq: number;
  event_id: string;
  event_type: string;
  position: string;
  digest: string;
}

export interface ChainHead {
  seq: number;
  digest: string;
}

/**
 * The digest of one entry: its postings in order, each as its fields that say what was booked
 * (not the log position: a copy of the log to another store keeps its digests).
 */
export function entryDigest(previous: string, postings: readonly Posting[]): string {
  const canonical = postings.map((p) => [
    p.posting_id,
    p.event_id,
    p.event_type,
    p.recorded_at,
    p.occurred_at ?? null,
    p.mode,
    p.currency,
    p.account,
    p.debit_cents,
    p.credit_cents,
    p.reference,
    p.processor_ref,
    p.kind ?? null,
    p.reason ?? null,
    p.actor ?? null,
  ]);
  return createHash('sha256').update(previous).update('\n').update(JSON.stringify(canonical)).digest('hex');
}

/** One event's postings, in order: the postings of an event are consecutive in the journal. */
export function entriesOf<P extends Posting>(postings: readonly P[]): P[][] {
  const entries: P[][] = [];
  for (const p of postings) {
    const last = entries[entries.length - 1];
    if (last && last[0].event_id === p.event_id) last.push(p);
    else entries.push([p]);
  }
  return entries;
}

/**
 * The chain entries of postings in log order, continuing each mode's chain from `heads`
 * (its last entry so far; the genesis when absent). `heads` is advanced in place.
 */
export function chainOf(postings: readonly Posting[], heads: Map<string, ChainHead> = new Map()): ChainEntry[] {
  return entriesOf(postings).map((entry) => {
    const first = entry[0];
    const head = heads.get(first.mode) ?? { seq: 0, digest: GENESIS_DIGEST };
    const next = { seq: head.seq + 1, digest: entryDigest(head.digest, entry) };
    heads.set(first.mode, next);
    return { mode: first.mode, event_id: first.event_id, event_type: first.event_type, position: first.position, ...next };
  });
}
