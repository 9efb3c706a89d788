import { Logger } from '@nestjs/common';
import type { Database } from '../database/database';

/** How long samples are kept: the console charts the last hour; a day leaves room to look back. */
export const LAG_SAMPLES_KEPT_HOURS = 24;
const MINUTE_MS = 60_000;
/** Ticks land this far into each minute, so every minute gets one, whatever the timer's drift. */
const TICK_OFFSET_MS = 30_000;

export interface LagSample {
  read_model: string;
  lag_seconds: number;
}

/** The largest lag of any read model in a minute. */
export interface LagMinute {
  minute: Date;
  lag_seconds: number;
}

/**
 * Read-model lag over time (issue 26: the overview's "Read model lag" chart), one row per
 * minute and read model in read_model_lag (migration 0008): the largest lag this instance
 * saw in that minute. Seen means measured by the tick (every minute, the read models whose
 * serving build runs here) or observed by any status() of the minute (GET /readyz, /metrics,
 * the console), so a lag that came and went between two ticks still shows. Several
 * instances write the same minute: GREATEST keeps the largest.
 *
 * Cheap on purpose: one statement a minute writes every sample buffered since the last one
 * and deletes those older than LAG_SAMPLES_KEPT_HOURS. An instance that runs no consumer
 * (WORKERS=false, or every lease held elsewhere) writes nothing: its samples would only
 * repeat another's.
 */
export class LagSampler {
  private readonly logger = new Logger('Projections');
  /** minute (epoch ms) → read model → largest lag seen in it. */
  private seen = new Map<number, Map<string, number>>();
  private timer?: NodeJS.Timeout;
  private writing: Promise<unknown> = Promise.resolve();
  private running = false;

  constructor(
    private readonly db: Database,
    /** The lags of the read models whose serving build this instance runs; undefined when it runs no consumer at all. */
    private readonly measure: () => Promise<LagSample[] | undefined>,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule();
  }

  /** No tick after this resolves, and the one under way (if any) has finished. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.seen.clear();
    await this.writing;
  }

  /** Lags a status() computed (this instance saw them): kept for their minute's sample while sampling. */
  observe(samples: readonly LagSample[], now = Date.now()): void {
    if (!this.running) return;
    const minute = Math.floor(now / MINUTE_MS) * MINUTE_MS;
    const inMinute = this.seen.get(minute) ?? new Map<string, number>();
    this.seen.set(minute, inMinute);
    for (const { read_model, lag_seconds } of samples) inMinute.set(read_model, Math.max(inMinute.get(read_model) ?? 0, lag_seconds));
  }

  /**
   * Measures now and writes what this minute (and any earlier one not yet written) saw:
   * the timer's tick, and a test's. Answers how many rows it wrote.
   */
  sample(now = Date.now()): Promise<number> {
    const run = this.writing.then(() => this.write(now));
    this.writing = run.catch(() => undefined);
    return run;
  }

  private schedule(): void {
    if (!this.running) return;
    const delay = MINUTE_MS - ((Date.now() - TICK_OFFSET_MS) % MINUTE_MS);
    this.timer = setTimeout(() => {
      void this.sample()
        .catch((error) => this.logger.warn(`sampling read model lag: ${(error as Error).message}`))
        .finally(() => this.schedule());
    }, delay);
    this.timer.unref();
  }

  private async write(now: number): Promise<number> {
    const measured = await this.measure();
    if (measured === undefined) {
      this.seen.clear();
      return 0;
    }
    this.observe(measured, now);
    const seen = this.seen;
    this.seen = new Map();
    const rows = [...seen].flatMap(([minute, lags]) => [...lags].map(([readModel, lag]) => ({ minute, readModel, lag })));
    if (!rows.length) return 0;
    // On failure (the database away) these are dropped: their minutes show as not sampled.
    await this.db.query(
      `WITH expired AS (
         DELETE FROM read_model_lag WHERE minute < now() - $4 * interval '1 hour'
       )
       INSERT INTO read_model_lag AS l (minute, read_model, lag_seconds)
       SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::double precision[])
       ON CONFLICT (minute, read_model) DO UPDATE SET lag_seconds = GREATEST(l.lag_seconds, EXCLUDED.lag_seconds)`,
      [rows.map((r) => new Date(r.minute).toISOString()), rows.map((r) => r.readModel), rows.map((r) => r.lag), LAG_SAMPLES_KEPT_HOURS],
    );
    return rows.length;
  }
}

/** The samples since an instant, per minute, oldest first: the largest lag of any read model. A minute no instance sampled is missing. */
export async function lagPerMinute(db: Database, since: Date): Promise<LagMinute[]> {
  const { rows } = await db.query<{ minute: Date | string; lag_seconds: number | string }>(
    `SELECT minute, max(lag_seconds) AS lag_seconds FROM read_model_lag WHERE minute >= $1 GROUP BY minute ORDER BY minute`,
    [since.toISOString()],
  );
  return rows.map((r) => ({ minute: new Date(r.minute), lag_seconds: Number(r.lag_seconds) }));
}
