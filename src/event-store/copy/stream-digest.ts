import { createHash } from 'node:crypto';
import type { RecordedEvent } from '../event-store';

/**
 * JSON with object keys sorted: Postgres jsonb hands keys back in its own order, the
 * EventStoreDB side in the order they were written, so the same event must hash the same
 * whichever side it was read from.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .filter((k) => (value as any)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as any)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** What a copy must keep of an event (position and time are the target's own). */
export function eventFingerprint(e: RecordedEvent): string {
  return canonicalJson({ id: e.id, revision: e.revision, type: e.type, data: e.data, metadata: e.metadata ?? {} });
}

export interface StreamDigest {
  events: number;
  /** sha256 over the fingerprints of the stream's events in revision order. */
  sha256: string;
}

export function digestStream(events: readonly RecordedEvent[]): StreamDigest {
  const hash = createHash('sha256');
  for (const e of events) hash.update(eventFingerprint(e)).update('\n');
  return { events: events.length, sha256: hash.digest('hex') };
}
