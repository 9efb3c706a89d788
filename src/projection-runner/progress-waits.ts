import { EventEmitter } from 'node:events';
import type { Database } from '../database/database';
import type { Position } from '../event-store/event-store';

const WAIT_POLL_MS = 25;

/** What the waits need of the consumers running in this process. */
export interface LocalConsumers {
  /** Where a consumer running here has read to; undefined when it does not run here. */
  position(name: string): Position | undefined;
  stalled(name: string): boolean;
  /** The version of a projection this code builds (a live build of another version is a rolling deploy's). */
  versionOf(projection: string): number | undefined;
}

/**
 * Read-your-writes: waits until read models and subscribers have processed a position.
 * Consumers running in this process are followed in memory (each committed batch wakes the
 * waiters at once); those running elsewhere are polled in the database.
 */
export class ProgressWaits {
  private readonly progress = new EventEmitter();

  constructor(
    private readonly db: Database,
    private readonly local: LocalConsumers,
  ) {
    this.progress.setMaxListeners(0);
  }

  /** A local consumer moved (a batch committed, a build went live, parked events applied). */
  advanced(): void {
    this.progress.emit('advanced');
  }

  /**
   * Resolves true once the named projections' live builds and subscribers have processed
   * `position`; false after timeoutMs, or at once when one of them is stalled.
   */
  async waitFor(position: Position, names: readonly string[], timeoutMs = 5000): Promise<boolean> {
    if (!names.length) return true;
    const deadline = Date.now() + timeoutMs;
    const at = (name: string) => this.local.position(name) ?? '';
    for (;;) {
      const { rows: all } = await this.db.query<{ name: string; projection: string | null; version: number | null; position: string; stalled: boolean }>(
        `SELECT c.name, b.projection, b.version, c.position, c.stalled_since IS NOT NULL AS stalled
           FROM projection_checkpoints c LEFT JOIN projection_builds b ON b.id = c.name
          WHERE b.state = 'live' AND b.projection = ANY($1::text[])
             OR c.name LIKE 'subscriber:%' AND c.name = ANY($1::text[])`,
        [names],
      );
      // During a rolling deploy the live build may be another version's, moved only by the
      // instances still running it (maybe none): its lag is stale reads, not a reason to hold writes.
      const rows = all.filter((r) => r.projection === null || this.local.versionOf(r.projection) === r.version);
      if (all.length < names.length) {
        // A projection without a live build yet: look again after a poll.
        if (!(await this.pause(deadline, () => false))) return false;
        continue;
      }
      if (rows.some((r) => r.stalled)) return false;
      // A consumer running here may be further than it stored (batches of no concern to it).
      const behind = rows.filter((r) => r.position < position && at(r.name) < position).map((r) => r.name);
      if (!behind.length) return true;
      const local = behind.every((name) => this.local.position(name) !== undefined);
      // Consumers running here are followed in memory: no query per batch they commit.
      const reached = () => local && behind.every((name) => at(name) >= position || this.local.stalled(name));
      if (!(await this.pause(deadline, reached, local))) return false;
      if (!local) continue;
      if (behind.every((name) => at(name) >= position)) return true;
      if (behind.some((name) => this.local.stalled(name))) return false;
    }
  }

  /**
   * Waits until `done()` holds after a local batch commit, or for a poll (progress made by
   * another instance shows only in the database), or until the deadline: false then.
   */
  private async pause(deadline: number, done: () => boolean, onlyLocal = false): Promise<boolean> {
    const left = deadline - Date.now();
    if (left <= 0) return false;
    await new Promise<void>((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.progress.off('advanced', check);
        resolve();
      };
      const check = () => {
        if (done() || !onlyLocal) finish();
      };
      // Followed in memory, a wait needs no poll; the deadline still ends it.
      const timer = setTimeout(finish, onlyLocal ? left : Math.min(WAIT_POLL_MS, left));
      this.progress.on('advanced', check);
      if (done()) finish();
    });
    return true;
  }
}
