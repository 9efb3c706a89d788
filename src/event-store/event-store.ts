import { ConcurrencyConflict, DependencyUnavailable, ResourceDeleted, TooLargeToStore } from '../platform/errors';

/**
 * The EventStore port. Adapters: Postgres (embedded default, also on PGlite) and, later,
 * EventStoreDB. Positions are opaque, totally ordered strings: "<commit>:<prepare>", each
 * part zero-padded to 20 digits so string order is position order. In Postgres commit is
 * the transaction id and prepare the global sequence; EventStoreDB's $all positions have
 * the same two parts.
 */
export type Position = string;

export const START: Position = `${'0'.repeat(20)}:${'0'.repeat(20)}`;

export function toPosition(commit: bigint | string | number, prepare: bigint | string | number): Position {
  return `${String(commit).padStart(20, '0')}:${String(prepare).padStart(20, '0')}`;
}

export function parsePosition(position: Position): { commit: bigint; prepare: bigint } {
  const match = /^(\d{20}):(\d{20})$/.exec(position);
  if (!match) throw new Error(`not an event store position: ${position}`);
  return { commit: BigInt(match[1]), prepare: BigInt(match[2]) };
}

/** 'no_stream', 'stream_exists', 'any', or the 0-based revision of the stream's last event. */
export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | number;

export interface NewEvent<T extends string = string, D = Record<string, unknown>> {
  /** Unique event id (uuid); generated when absent. */
  id?: string;
  type: T;
  data: D;
  metadata?: Record<string, unknown>;
}

export interface RecordedEvent<D = any> {
  id: string;
  streamId: string;
  /** 0-based position of the event within its stream. */
  revision: number;
  type: string;
  data: D;
  metadata: Record<string, unknown>;
  position: Position;
  createdAt: Date;
}

export interface AppendResult {
  /** Revision of the last appended event: pass it as the next expected revision. */
  nextRevision: number;
  /** Position of the last appended event, for read-your-writes. */
  position: Position;
}

/** A lost optimistic-concurrency race: the stream was not at the expected revision. */
export class WrongExpectedRevisionError extends ConcurrencyConflict {
  constructor(readonly streamId: string, readonly expected: ExpectedRevision) {
    super(`stream ${streamId} is not at the expected revision ${String(expected)}`);
  }
}

/**
 * The event store did not answer (connection lost, server down, deadline passed). An append
 * is all or nothing; one whose answer was lost may have been taken, and a retry with the
 * same event ids is taken once.
 */
export class EventStoreUnavailableError extends DependencyUnavailable {
  readonly dependency = 'event store';
}

/**
 * The stream was deleted for good (EventStoreDB's tombstone, made by an operator): it can
 * be neither read nor appended to again under its name. Postgres never deletes a stream.
 */
export class DeletedStreamError extends ResourceDeleted {
  constructor(readonly streamId: string) {
    super(`stream ${streamId} was deleted for good (tombstoned): it can no longer be read or appended to`);
  }
}

/** The append is larger than the store takes at once (EventStoreDB's MaxAppendSize, 1 MiB by default); nothing of it was written. */
export class AppendTooLargeError extends TooLargeToStore {
  constructor(readonly streamId: string, readonly limitBytes: number) {
    super(`append to ${streamId} refused: larger than the event store's MaxAppendSize of ${limitBytes} bytes (nothing was written)`);
  }
}

/**
 * The event store refused the call to the user the service connects as (EventStoreDB's
 * AccessDenied on a secured server); the message names the role the call needs. A
 * configuration fault, answered 503 so the caller retries once an operator fixed it.
 */
export class EventStoreAccessDeniedError extends DependencyUnavailable {
  readonly dependency = 'event store';
}

/**
 * The store refused to create a persistent subscription group as asked (EventStoreDB: a
 * start position past the end of $all, a startAfter from another log). Reported to the
 * consumer's onError on every attempt to join, which goes on with backoff.
 */
export class PersistentGroupRefusedError extends Error {
  constructor(readonly group: string, reason: string) {
    super(`persistent subscription group ${group} cannot be created: ${reason}`);
  }
}

export interface ReadStreamOptions {
  /** The first revision to read: a caller holding a state folded up to n - 1 reads from n. */
  fromRevision?: number;
  /** At most this many events (default: to the stream's end). */
  limit?: number;
}

export interface ReadAllOptions {
  /** Read events strictly after this position. */
  after: Position;
  limit: number;
}

export interface ReadAllBackwardOptions {
  /** Read events strictly before this position; from the head when absent. */
  before?: Position;
  limit: number;
}

/**
 * Called with each batch and how far the log was read for it (`readTo`, at or after the
 * batch's last event). Resolve to nothing to continue after readTo, or to a position to
 * continue after instead (a consumer whose checkpoint was moved elsewhere).
 */
export type BatchHandler = (events: RecordedEvent[], readTo: Position) => Promise<Position | void>;

export interface SubscribeOptions {
  batchSize?: number;
  /**
   * Only events of these types are handed over; the others are read past (on Postgres only
   * their positions leave the database). A batch may then be empty: it says the log was read
   * to readTo.
   */
  types?: readonly string[];
  onError?: (error: unknown) => void;
  /** Called whenever a read reached the end of the readable log (a short or empty batch). */
  onCaughtUp?: () => Promise<void>;
}

export interface Subscription {
  stop(): Promise<void>;
}

/**
 * A competing-consumer subscription: a named group of consumers, in any number of
 * processes, that share the events of some types. Each event goes to one consumer at a
 * time; the group remembers which events were acknowledged, so a consumer that starts
 * later (or again) goes on where the group stands. No order is promised between events.
 */
export interface PersistentSubscriptionOptions {
  /** Event types the group receives, of this application's streams. */
  types: readonly string[];
  /** Where the group starts when it does not exist yet: after this position. Default START. */
  startAfter?: Position;
  /** Deliveries after the first before a failing event is parked. */
  maxRetries: number;
  /** An event neither acknowledged nor refused within this is handed out again (its consumer died); it counts as a retry. */
  messageTimeoutMs: number;
  /** Events one consumer holds, and handles concurrently, at once. */
  bufferSize: number;
  onError?: (error: unknown) => void;
}

/**
 * Delivery is at least once: an event may come again after it was acknowledged (on
 * EventStoreDB everything acknowledged since the group's last checkpoint after a node
 * restart or failover, at retry count 0), so a handler must be idempotent in effect.
 *
 * Handles one event: resolving acknowledges it; throwing refuses it, and it is handed out
 * again (to this or another consumer) until it has been retried maxRetries times, then
 * parked with the error as the reason. retryCount is 0 on the first delivery.
 */
export type PersistentHandler = (event: RecordedEvent, retryCount: number) => Promise<void>;

/** Told of one append this process made: its events and where the last of them is. */
export type AppendListener = (streamId: string, events: readonly NewEvent[], appended: AppendResult) => void;

export interface EventStore {
  /**
   * Throws WrongExpectedRevisionError (a lost race), DeletedStreamError (a tombstoned
   * stream), AppendTooLargeError (over the store's largest append), EventStoreUnavailableError
   * (no answer within the ride-out), EventStoreAccessDeniedError (a secured server refused).
   */
  append(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult>;
  /**
   * The events of one stream in revision order, from `fromRevision` (default 0) on; [] when
   * the stream does not exist or has nothing from there. Throws DeletedStreamError for a
   * stream deleted for good (as append does).
   */
  readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /**
   * Events after a position in global order, only up to the point every reader can see
   * (no event may later appear before a position already returned). With limit 1 it gives
   * the oldest event a consumer at `after` has not read, whose age is that consumer's lag.
   */
  readAll(options: ReadAllOptions): Promise<RecordedEvent[]>;
  /**
   * Events before a position (or from the head) in reverse global order, newest first: a
   * bounded look at the recent log (the console's event browser) without reading it from
   * the start. Only events readAll can return.
   */
  readAllBackward(options: ReadAllBackwardOptions): Promise<RecordedEvent[]>;
  /** Position of the newest event readAll can return, or START. */
  headPosition(): Promise<Position>;
  /**
   * Catch up from `after`, then follow live appends. Batches are handed over one at a
   * time; if onBatch throws, the same batch is offered again after a pause.
   */
  subscribeToAll(after: Position, onBatch: BatchHandler, options?: SubscribeOptions): Subscription;
  /**
   * Joins the group (creating it when it does not exist) as one more consumer. stop() ends
   * this consumer without waiting for handlers in flight; what they held is handed out again.
   */
  subscribePersistent(group: string, options: PersistentSubscriptionOptions, handler: PersistentHandler): Subscription;
  /** Events the group parked, oldest first. */
  parkedEvents(group: string): Promise<RecordedEvent[]>;
  /**
   * Hands the group's parked events to its consumers again (EventStoreDB's "replay parked
   * messages"), each as a first delivery (retryCount 0): once this resolves parkedEvents no
   * longer lists them, and a consumer that refuses one maxRetries more times parks it again.
   * An event parked while this runs may stay parked. Resolves to how many were replayed: 0
   * for a group that parked nothing or does not exist.
   *
   * On EventStoreDB a replay can LOSE events: the server removes them from the parked list
   * at once and holds them only in memory until they are acknowledged, so a node restart or
   * failover before that loses them (neither parked nor handed out again). Replay only on a
   * healthy cluster, and note the parked events first. On Postgres nothing is lost.
   */
  replayParked(group: string): Promise<number>;
  /** Called after each append this process made succeeds (metrics, kept copies); returns a function that removes it. */
  onAppended(listener: AppendListener): () => void;
  close(): Promise<void>;
}

export const EVENT_STORE = Symbol('EventStore');
