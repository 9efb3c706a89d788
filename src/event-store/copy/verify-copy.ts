import { START, type EventStore } from '../event-store';
import { digestStream, StreamDigest } from './stream-digest';

export interface CopyDifference {
  streamId: string;
  source: StreamDigest;
  target: StreamDigest;
}

export interface VerifyResult {
  streams: number;
  events: number;
  /** The first stream whose count or hash differs; absent when all match. */
  firstDifference?: CopyDifference;
}

/**
 * Compares every stream's event count and hash on both sides, stopping at the first
 * difference; then that the target holds no stream of the service's the source lacks
 * (another deployment's events would end up in the rebuilt read models).
 */
export async function verifyCopy(source: EventStore, target: EventStore, streamIds: Iterable<string>): Promise<VerifyResult> {
  let streams = 0;
  let events = 0;
  const known = new Set<string>();
  for (const streamId of streamIds) {
    known.add(streamId);
    const here = digestStream(await source.readStream(streamId));
    const there = digestStream(await target.readStream(streamId));
    if (here.events !== there.events || here.sha256 !== there.sha256) {
      return { streams, events, firstDifference: { streamId, source: here, target: there } };
    }
    streams++;
    events += here.events;
  }
  const extra = await firstStreamNotIn(target, known);
  if (extra) {
    return { streams, events, firstDifference: { streamId: extra, source: digestStream([]), target: digestStream(await target.readStream(extra)) } };
  }
  return { streams, events };
}

async function firstStreamNotIn(store: EventStore, known: Set<string>): Promise<string | undefined> {
  let after = START;
  for (;;) {
    const page = await store.readAll({ after, limit: 1000 });
    if (page.length === 0) return undefined;
    const stranger = page.find((e) => !known.has(e.streamId));
    if (stranger) return stranger.streamId;
    after = page[page.length - 1].position;
  }
}
