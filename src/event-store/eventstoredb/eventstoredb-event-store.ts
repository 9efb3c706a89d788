/**
 * The EventStore port on EventStoreDB (KurrentDB), through the official client. The
 * service's streams are the whole of $all that matters: every read of $all carries a
 * server-side stream-name prefix filter (the service's stream categories), which leaves
 * out system events ($-prefixed streams) and other applications' streams.
 */
import { randomUUID } from 'node:crypto';
import {
  BACKWARDS,
  END,
  FORWARDS,
  KurrentDBClient,
  MaxAppendSizeExceededError,
  PersistentSubscriptionDoesNotExistError,
  PersistentSubscriptionFailedError,
  START as CLIENT_START,
  StreamDeletedError,
  StreamNotFoundError,
  WrongExpectedVersionError,
  jsonEvent,
  streamNameFilter,
  type AppendStreamState,
  type Filter,
} from '@kurrent/kurrentdb-client';
import {
  AppendListener,
  AppendResult,
  AppendTooLargeError,
  DeletedStreamError,
  BatchHandler,
  EventStore,
  ExpectedRevision,
  NewEvent,
  PersistentHandler,
  PersistentSubscriptionOptions,
  Position,
  ReadAllBackwardOptions,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  EventStoreUnavailableError,
  START,
  SubscribeOptions,
  Subscription,
  WrongExpectedRevisionError,
  parsePosition,
  toPosition,
} from '../event-store';
import { ConcurrencyConflict } from '../../platform/errors';
import { attributed } from '../../platform/request-context';
import { LiveWakeUp } from './live-wake-up';
import { joinPersistentGroup, parkedStreamOf, serverGroupName } from './persistent-group';
import { asUnavailable, explainDenied, toRecorded } from './recorded';
import { rideOut } from './ride-out';
import { serviceStreamPrefixes } from './stream-prefixes';

export interface EventStoreDbOptions {
  /** esdb:// or kurrentdb:// connection string. */
  url: string;
  /** Stream-name prefixes of this application's streams; default: the service's stream categories. */
  streamPrefixes?: readonly string[];
  /** How long a call rides out a server that does not answer before it fails (EVENTSTORE_RETRY_MS). */
  retryMs?: number;
}


/** How long a caught-up subscriber waits when no wake-up arrives (a lost live subscription). */
const POLL_FALLBACK_MS = 1000;
/** Pause before a failed batch (or read) is tried again. */
const RETRY_MS = 1000;
/**
 * How far back from a stream's end a retried any/stream_exists append looks for its own
 * event ids before it appends again (see append).
 */
const READ_BACK_EVENTS = 1000;
/** What reading a group's parked events needs on a secured server. */
const PARKED_NEEDS = "the server keeps a group's parked stream readable by $admins only (its $acl), so that user must be in $admins";
/** How often a replay of parked events looks whether the server has truncated the parked stream yet. */
const REPLAY_POLL_MS = 50;

function toClientStreamState(expected: ExpectedRevision): AppendStreamState {
  return typeof expected === 'number' ? BigInt(expected) : expected;
}

export class EventStoreDbEventStore implements EventStore {
  readonly client: KurrentDBClient;
  private readonly filter: Filter;
  private readonly streamPrefixes: readonly string[];
  private readonly retryMs: number;
  private readonly wakeUp: LiveWakeUp;
  private readonly appendListeners = new Set<AppendListener>();

  constructor(options: EventStoreDbOptions) {
    // Same meaning; the client warns on every connect about the older scheme.
    const url = options.url.replace(/^esdb(\+discover)?:\/\//, (_, discover) => `kurrentdb${discover ?? ''}://`);
    this.client = KurrentDBClient.connectionString(url);
    this.streamPrefixes = [...(options.streamPrefixes ?? serviceStreamPrefixes())];
    this.retryMs = options.retryMs ?? 10_000;
    this.filter = streamNameFilter({ prefixes: [...this.streamPrefixes] });
    this.wakeUp = new LiveWakeUp(this.client, this.filter);
  }

  /**
   * Proves the server answers (a read of the head), so a wrong URL fails at start, not at
   * the first request. A node still starting (not ready) is waited for, up to timeoutMs.
   */
  async start(timeoutMs = 5000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([rideOut('read of the head of $all', timeoutMs, () => this.head()), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  onAppended(listener: AppendListener): () => void {
    this.appendListeners.add(listener);
    return () => this.appendListeners.delete(listener);
  }

  /**
   * Appends, riding out a node that gives no outcome (see rideOut). A retry is the same
   * write, never a second one: at an exact expected revision (no_stream too) the server
   * recognises the event ids from the stream itself; at any/stream_exists only from a
   * per-node cache of recent ids that a restart or a leader change empties, so before
   * making such an append again this reads the stream's end back, and an attempt that did
   * land is answered from there.
   */
  async append(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    // Ids are fixed here, so a retried append carries the same ids.
    const proposed = events.map((e) => jsonEvent({ id: e.id ?? randomUUID(), type: e.type, data: e.data as any, metadata: attributed(e.metadata) as any }));
    const ids = proposed.map((e) => e.id);
    const readBack = expected === 'any' || expected === 'stream_exists';
    let attempted = false;
    let appended: AppendResult;
    try {
      appended = await rideOut(`append to ${streamId}`, this.retryMs, async () => {
        if (attempted && readBack) {
          const landed = await this.landed(streamId, ids);
          if (landed) return landed;
        }
        attempted = true;
        const result = await this.client.appendToStream(streamId, proposed, { streamState: toClientStreamState(expected) });
        if (!result.position) throw new Error(`append to ${streamId} returned no position`);
        return { nextRevision: Number(result.nextExpectedRevision), position: toPosition(result.position.commit, result.position.prepare) };
      });
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) throw new WrongExpectedRevisionError(streamId, expected);
      if (error instanceof StreamDeletedError) throw new DeletedStreamError(streamId);
      if (error instanceof MaxAppendSizeExceededError) throw new AppendTooLargeError(streamId, error.maxAppendSize);
      throw error;
    }
    this.wakeUp.wake();
    for (const listener of this.appendListeners) listener(streamId, events, appended);
    return appended;
  }

  /** An earlier attempt's result, when all of its event ids are among the stream's last events (null when none is). */
  private async landed(streamId: string, ids: readonly string[]): Promise<AppendResult | null> {
    const found = new Map<string, RecordedEvent>();
    try {
      for await (const resolved of this.client.readStream(streamId, { direction: BACKWARDS, fromRevision: END, maxCount: READ_BACK_EVENTS })) {
        const recorded = toRecorded(resolved);
        if (recorded && ids.includes(recorded.id)) found.set(recorded.id, recorded);
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return null;
      throw error;
    }
    if (found.size === 0) return null;
    const last = found.get(ids[ids.length - 1]);
    // Part of them there: the server's own answer to such an append is WrongExpectedVersion.
    if (found.size < ids.length || !last) throw new WrongExpectedVersionError(undefined, { streamName: streamId, current: BigInt(Math.max(...[...found.values()].map((e) => e.revision))), expected: 'any' });
    return { nextRevision: last.revision, position: last.position };
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const fromRevision = options.fromRevision ? BigInt(options.fromRevision) : CLIENT_START;
    try {
      return await rideOut(`read of ${streamId}`, this.retryMs, async () => {
        const events: RecordedEvent[] = [];
        for await (const resolved of this.client.readStream(streamId, { direction: FORWARDS, fromRevision, ...(options.limit !== undefined ? { maxCount: options.limit } : {}) })) {
          const recorded = toRecorded(resolved);
          if (recorded) events.push(recorded);
        }
        return events;
      });
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      if (error instanceof StreamDeletedError) throw new DeletedStreamError(streamId);
      throw error;
    }
  }

  readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    return rideOut('read of $all', this.retryMs, () => this.readAfter(options.after, options.limit));
  }

  /**
   * The server reads $all from a position inclusively; the port reads strictly after it,
   * so the event at `after` (when there is one) is dropped and one more is asked for.
   */
  private async readAfter(after: Position, limit: number): Promise<RecordedEvent[]> {
    const { commit, prepare } = parsePosition(after);
    const fromPosition = after === START ? CLIENT_START : { commit, prepare };
    const events: RecordedEvent[] = [];
    for await (const resolved of this.client.readAll({ direction: FORWARDS, fromPosition, maxCount: limit + 1, filter: this.filter })) {
      const recorded = toRecorded(resolved);
      if (!recorded || recorded.position <= after) continue;
      events.push(recorded);
      if (events.length === limit) break;
    }
    return events;
  }

  /**
   * Backwards from a position or the end of $all; an event at `before` itself is dropped
   * (one more is asked for), whichever way the server counts the position it starts from.
   */
  readAllBackward(options: ReadAllBackwardOptions): Promise<RecordedEvent[]> {
    return rideOut('backward read of $all', this.retryMs, async () => {
      const before = options.before;
      const fromPosition = before ? parsePosition(before) : END;
      const events: RecordedEvent[] = [];
      if (before === START) return events;
      for await (const resolved of this.client.readAll({ direction: BACKWARDS, fromPosition, maxCount: options.limit + 1, filter: this.filter })) {
        const recorded = toRecorded(resolved);
        if (!recorded || (before && recorded.position >= before)) continue;
        events.push(recorded);
        if (events.length === options.limit) break;
      }
      return events;
    });
  }

  headPosition(): Promise<Position> {
    return rideOut('read of the head of $all', this.retryMs, () => this.head());
  }

  private async head(): Promise<Position> {
    for await (const resolved of this.client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1, filter: this.filter })) {
      const recorded = toRecorded(resolved);
      if (recorded) return recorded.position;
    }
    return START;
  }

  /**
   * Catch-up reads of $all from the checkpoint, batch by batch; once caught up, waits for
   * the live subscription (or this process's own append) to say something was written.
   * The checkpoint moves only past batches the handler accepted, so a dropped connection
   * (of the reads or of the live subscription, which resubscribes) skips and repeats nothing.
   */
  subscribeToAll(after: Position, onBatch: BatchHandler, options: SubscribeOptions = {}): Subscription {
    let stopped = false;
    let position = after;
    const batchSize = options.batchSize ?? 500;
    const types = options.types;
    let release: (() => void) | null = null;
    const loop = (async () => {
      while (!stopped) {
        try {
          const seen = this.wakeUp.seq;
          // Not ridden out: this loop tries again by itself, and stops at once when told.
          const read = await this.readAfter(position, batchSize).catch((error) => Promise.reject(asUnavailable(error, 'read of $all')));
          if (stopped) break;
          if (read.length > 0) {
            const readTo = read[read.length - 1].position;
            // The stream-prefix filter takes the server's only filter: event types are picked here.
            const batch = types ? read.filter((e) => types.includes(e.type)) : read;
            position = (await onBatch(batch, readTo)) ?? readTo;
            if (position !== readTo || read.length === batchSize) continue;
          }
          if (stopped) break;
          await options.onCaughtUp?.();
          if (this.wakeUp.seq === seen) {
            const wait = this.wakeUp.next(POLL_FALLBACK_MS);
            release = wait.cancel;
            await wait.done;
          }
        } catch (error) {
          if (stopped) break;
          options.onError?.(error);
          const wait = this.wakeUp.sleep(RETRY_MS);
          release = wait.cancel;
          await wait.done;
        }
      }
    })();
    return {
      stop: async () => {
        stopped = true;
        release?.();
        await loop;
      },
    };
  }

  /** A native persistent subscription to $all, filtered by event type on the server (see persistent-group.ts). */
  subscribePersistent(group: string, options: PersistentSubscriptionOptions, handler: PersistentHandler): Subscription {
    return joinPersistentGroup(this.client, this.streamPrefixes, group, options, handler);
  }

  /**
   * Reads the group's parked stream, whose events are links ("$>") to the parked events,
   * resolved by the server. A link whose event is gone (deleted, scavenged) is left out.
   */
  async parkedEvents(group: string): Promise<RecordedEvent[]> {
    const name = await this.serverGroup(group);
    try {
      return (await this.readParked(name)).events;
    } catch (error) {
      throw explainDenied(error, `reading the parked events of ${name}`, PARKED_NEEDS);
    }
  }

  /** The server's name of the group's current version (see persistent-group.ts): its parked events are the ones listed and replayed. */
  private serverGroup(group: string): Promise<string> {
    return rideOut(`read of the versions of ${group}`, this.retryMs, () => serverGroupName(this.client, group));
  }

  /**
   * The server's own replay (ReplayParked), stopped after the last link read here: the
   * server reads the parked stream up to there, hands each event to the group again as a
   * retry with retry count 0, then truncates the parked stream before that point (a "$tb"
   * in its metadata), so events parked meanwhile stay parked. Its answer only says the
   * replay started; this waits until the truncation shows, so that parkedEvents() no longer
   * lists what was replayed when it resolves.
   */
  async replayParked(logical: string): Promise<number> {
    const group = await this.serverGroup(logical);
    const { events, stopAt } = await this.readParked(group).catch((error) => Promise.reject(explainDenied(error, `replaying the parked events of ${group}`, PARKED_NEEDS)));
    if (stopAt === null) return 0;
    const what = `replay of the parked events of ${group}`;
    try {
      // Safe to make again: a replay that did happen truncated the stream up to stopAt, so another replays nothing.
      await rideOut(what, this.retryMs, () => this.client.replayParkedMessagesToAll(group, { stopAt }));
    } catch (error) {
      if (error instanceof PersistentSubscriptionDoesNotExistError) return 0;
      // "A replay or truncate is already in progress."
      if (error instanceof PersistentSubscriptionFailedError) throw new ConcurrencyConflict(`${what}: ${error.reason || error.message}`);
      throw explainDenied(error, what, 'the server lets only a user in $ops or $admins replay parked events');
    }
    for (const deadline = Date.now() + this.retryMs; !(await this.parkedFrom(group, stopAt)); ) {
      if (Date.now() > deadline) throw new EventStoreUnavailableError(`${what}: the server started it but did not remove the replayed events from the parked stream within ${this.retryMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, REPLAY_POLL_MS));
    }
    return events.length;
  }

  /** The parked events, and the parked stream's event number after its last link (null when it holds none): a replay's stopAt. */
  private async readParked(group: string): Promise<{ events: RecordedEvent[]; stopAt: bigint | null }> {
    try {
      return await rideOut(`read of the parked events of ${group}`, this.retryMs, async () => {
        const events: RecordedEvent[] = [];
        let stopAt: bigint | null = null;
        for await (const resolved of this.client.readStream(parkedStreamOf(group), { direction: FORWARDS, fromRevision: CLIENT_START, resolveLinkTos: true })) {
          if (resolved.link) stopAt = resolved.link.revision + 1n;
          const recorded = resolved.event && resolved.link ? toRecorded(resolved) : null;
          if (recorded) events.push(recorded);
        }
        return { events, stopAt };
      });
    } catch (error) {
      if (error instanceof StreamNotFoundError) return { events: [], stopAt: null };
      throw error;
    }
  }

  /** Whether the group's parked stream now begins at or after `revision` (is truncated before it), or is empty. */
  private async parkedFrom(group: string, revision: bigint): Promise<boolean> {
    try {
      return await rideOut(`read of the parked events of ${group}`, this.retryMs, async () => {
        for await (const resolved of this.client.readStream(parkedStreamOf(group), { direction: FORWARDS, fromRevision: CLIENT_START, maxCount: 1 })) {
          return (resolved.event?.revision ?? revision) >= revision;
        }
        return true;
      });
    } catch (error) {
      if (error instanceof StreamNotFoundError) return true;
      throw error;
    }
  }

  async close(): Promise<void> {
    await this.wakeUp.close();
    await this.client.dispose();
  }
}
