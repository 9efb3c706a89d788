/**
 * Copies one event store's log into another through the port, in the source's global
 * order, each event at its own revision with its own id. Resumable: a stream the target
 * already holds part of is checked event by event against the source, and only what
 * follows is appended, so a copy run again after an interruption continues and never
 * duplicates. The target must be otherwise quiet (the service stopped).
 */
import type { EventStore, NewEvent, RecordedEvent } from '../event-store';
import { START, WrongExpectedRevisionError } from '../event-store';
import { eventFingerprint } from './stream-digest';

/** The target holds something other than the source at some revision of a stream. */
export class CopyConflictError extends Error {
  constructor(readonly streamId: string, readonly revision: number, reason: string) {
    super(`target stream ${streamId} differs from the source at revision ${revision}: ${reason}; refusing to copy over it`);
  }
}

export interface CopyOptions {
  /** Events read from the source per page. */
  pageSize?: number;
  onProgress?: (copied: number, skipped: number) => void;
}

export interface CopyResult {
  /** Every stream of the source with its event count, in order of first appearance. */
  streams: Map<string, number>;
  /** Events appended to the target by this run. */
  copied: number;
  /** Events the target already held (an earlier, interrupted run). */
  skipped: number;
}

export async function copyEvents(source: EventStore, target: EventStore, options: CopyOptions = {}): Promise<CopyResult> {
  const pageSize = options.pageSize ?? 1000;
  const streams = new Map<string, number>();
  // Per stream: how many events the target held before this run (read once, when first met).
  const held = new Map<string, number>();
  let copied = 0;
  let skipped = 0;
  let after = START;
  for (;;) {
    const page = await source.readAll({ after, limit: pageSize });
    if (page.length === 0) break;
    // Consecutive events of one stream go in one append: fewer round trips, same order.
    for (const run of runsOfOneStream(page)) {
      const streamId = run[0].streamId;
      if (!held.has(streamId)) held.set(streamId, await checkTargetPrefix(source, target, streamId));
      const already = held.get(streamId)!;
      const missing = run.filter((e) => e.revision >= already);
      skipped += run.length - missing.length;
      if (missing.length) {
        await appendAt(target, streamId, missing);
        copied += missing.length;
      }
      streams.set(streamId, run[run.length - 1].revision + 1);
    }
    options.onProgress?.(copied, skipped);
    after = page[page.length - 1].position;
  }
  return { streams, copied, skipped };
}

/**
 * EventStoreDB refuses an append larger than its MaxAppendSize (1 MiB by default), so a run
 * is also cut at this many bytes of data and metadata (an event larger than that on its
 * own still goes alone, and the server's error names the stream).
 */
const MAX_APPEND_BYTES = 512 * 1024;
const MAX_APPEND_EVENTS = 200;

function runsOfOneStream(page: RecordedEvent[]): RecordedEvent[][] {
  const runs: RecordedEvent[][] = [];
  let bytes = 0;
  for (const e of page) {
    const size = Buffer.byteLength(JSON.stringify(e.data)) + Buffer.byteLength(JSON.stringify(e.metadata ?? {}));
    const last = runs[runs.length - 1];
    if (last && last[0].streamId === e.streamId && last.length < MAX_APPEND_EVENTS && bytes + size <= MAX_APPEND_BYTES) {
      last.push(e);
      bytes += size;
    } else {
      runs.push([e]);
      bytes = size;
    }
  }
  return runs;
}

/** How many events the target holds of the stream, after checking each equals the source's. */
async function checkTargetPrefix(source: EventStore, target: EventStore, streamId: string): Promise<number> {
  const there = await target.readStream(streamId);
  if (there.length === 0) return 0;
  const here = await source.readStream(streamId);
  for (const [i, e] of there.entries()) {
    if (i >= here.length) throw new CopyConflictError(streamId, i, `the target holds ${there.length} events, the source ${here.length}`);
    if (eventFingerprint(e) !== eventFingerprint(here[i])) {
      throw new CopyConflictError(streamId, i, `target has ${e.type} ${e.id}, source has ${here[i].type} ${here[i].id}`);
    }
  }
  return there.length;
}

/**
 * Appends with the revision of the event before the first as the expected revision and
 * the source's ids: a retried append is taken once, and anything else written to the
 * stream meanwhile is refused rather than interleaved.
 */
async function appendAt(target: EventStore, streamId: string, events: RecordedEvent[]): Promise<void> {
  const first = events[0].revision;
  const proposed: NewEvent[] = events.map((e) => ({ id: e.id, type: e.type, data: e.data, metadata: e.metadata }));
  try {
    await target.append(streamId, proposed, first === 0 ? 'no_stream' : first - 1);
  } catch (error) {
    if (error instanceof WrongExpectedRevisionError) {
      throw new CopyConflictError(streamId, first, 'the target stream is not where the copy left it (written to meanwhile?)');
    }
    throw error;
  }
}
