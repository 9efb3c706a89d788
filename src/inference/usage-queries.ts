import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, Database, Queryable } from '../database/database';
import type { Mode } from '../platform/mode';
import { filteredBy, inMode, Owner, ownedBy } from '../platform/owner-scope';
import { ProjectionRunner } from '../projection-runner/projection-runner';
import { UsageMeter } from './usage-meter';
import { DailyUsage, usageReport, UsageReport, windowStart } from './usage-totals';

/** The name of this context's read model (its projection in projections/, its checkpoint). */
export const INFERENCE_USAGE_READ_MODEL = 'inference_usage';

const COLUMNS = `account_id, mode, to_char(day, 'YYYY-MM-DD') AS day, model, calls::int8::text AS calls,
  prompt_tokens::text AS prompt_tokens, completion_tokens::text AS completion_tokens, cost_micros::text AS cost_micros`;

function toDaily(row: any): DailyUsage {
  return {
    account_id: row.account_id,
    mode: row.mode,
    day: row.day,
    model: row.model,
    calls: Number(row.calls),
    prompt_tokens: Number(row.prompt_tokens),
    completion_tokens: Number(row.completion_tokens),
    cost_micros: Number(row.cost_micros),
  };
}

/** Reads of the inference_usage_daily read model. */
@Injectable()
export class UsageQueries {
  constructor(
    @Inject(DATABASE) private readonly db: Database,
    private readonly meter: UsageMeter,
    private readonly projections: ProjectionRunner,
  ) {}

  /**
   * One account's usage in one mode over the last `days` UTC days, today included. The
   * account's calls metered by this instance are in it (a bounded wait, as after writes),
   * so GET /v1/usage, `svc usage` and the console agree with the calls just answered.
   */
  async report(owner: Owner, days: number): Promise<UsageReport> {
    return usageReport(await this.daily(owner, days), days);
  }

  /** The daily rows report() sums (one per UTC day and model with calls), oldest first: the console charts them. */
  async daily(owner: Owner, days: number): Promise<DailyUsage[]> {
    const latest = this.meter.latestPosition(owner.mode, owner.accountId);
    if (latest) await this.projections.waitFor(latest, { projections: [INFERENCE_USAGE_READ_MODEL] });
    const s = ownedBy(owner);
    const { rows } = await this.db.query(
      `SELECT ${COLUMNS} FROM inference_usage_daily WHERE ${s.where()} AND day >= ${s.param(windowStart(days))}::date ORDER BY day, model`,
      s.params,
    );
    return rows.map(toDaily);
  }

  /**
   * Every account's calls in one mode per UTC day from `since` (yyyy-mm-dd) on, summed by the
   * database: a chart of a few days reads a row a day, not one per account, day and model.
   */
  async callsPerDay(mode: Mode, since: string): Promise<{ day: string; calls: number }[]> {
    const s = inMode(mode);
    const { rows } = await this.db.query<{ day: string; calls: string }>(
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, sum(calls)::text AS calls FROM inference_usage_daily WHERE ${s.where()} AND day >= ${s.param(since)}::date GROUP BY day ORDER BY day`,
      s.params,
    );
    return rows.map((r) => ({ day: r.day, calls: Number(r.calls) }));
  }

  /** Every daily row, for the audit, in one order. */
  async all(filter: { accountId?: string; mode?: Mode }, tx: Queryable = this.db): Promise<DailyUsage[]> {
    const s = filteredBy(filter);
    const { rows } = await tx.query(`SELECT ${COLUMNS} FROM inference_usage_daily WHERE ${s.where()} ORDER BY account_id, mode, day, model`, s.params);
    return rows.map(toDaily);
  }
}
