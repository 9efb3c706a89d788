import type { Queryable } from '../database/database';
import type { RecordedEvent } from '../event-store/event-store';
import type { FailurePolicy } from './consumer';

export const EVERY_EVENT = 'every event';

/**
 * A read model built from events. The runner applies every event in global order inside
 * one transaction per batch, together with the checkpoint, so apply runs once per event
 * per build; apply should still be idempotent where that is cheap. Its SQL names its tables
 * unqualified: they resolve to the schema of the build being written (ReadModelBuilds).
 */
export interface Projection {
  readonly name: string;
  /**
   * Bump when the tables or the meaning of apply change: the new version is built beside
   * the live one and takes over once it has caught up.
   */
  readonly version: number;
  /** Tables this projection owns; each is served to queries as the view public.<table>. */
  readonly tables: readonly string[];
  /** Idempotent DDL creating the tables and indexes. */
  readonly schema: string;
  /**
   * Event types it reads; every other event only moves its checkpoint. EVERY_EVENT reads the
   * whole log (the log's own rate): such a read model serves no API read, so appends do not
   * wait for it.
   */
  readonly handles: readonly string[] | typeof EVERY_EVENT;
  /** An event it keeps failing on: 'park' it and go on, or 'stop' (money: never skip one). */
  readonly whenFailing: FailurePolicy;
  apply(tx: Queryable, event: RecordedEvent): Promise<void>;
  /**
   * Set-based instead of apply, when one statement can apply many events (a busy stream, a
   * rebuild): gets every event of a batch it handles, in order, in the batch's transaction.
   */
  applyBatch?(tx: Queryable, events: RecordedEvent[]): Promise<void>;
}

export const PROJECTIONS = Symbol('Projections');
