import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, Database } from '../database/database';
import { EVENT_STORE, EventStore, Position, START } from '../event-store/event-store';
import type { Mode } from '../platform/mode';
import { liveBuild, readFromSchema } from '../projection-runner/read-model-builds';
import { InferenceCallMetered, InferenceEvents } from './events';
import { addCall, DailyUsage, usageKey } from './usage-totals';
import { UsageQueries, INFERENCE_USAGE_READ_MODEL } from './usage-queries';

export interface UsageVerifyReport {
  ok: boolean;
  /** The event-log position both sides were compared at. */
  position: Position;
  rows_checked: number;
  calls_checked: number;
  first_difference: { account_id: string; mode: Mode; day: string; model: string; field: string; expected: unknown; actual: unknown } | null;
}

const BATCH = 1000;
const FIELDS = ['calls', 'prompt_tokens', 'completion_tokens', 'cost_micros'] as const;

/**
 * `svc usage verify`: replays every metered call from the event log and compares the daily
 * totals with the read model. As `svc ledger verify` does for money: the read model and its
 * build's checkpoint come from one repeatable-read snapshot, the events up to that
 * checkpoint from the port afterwards (they never change). Live usage is what an invoice bills.
 */
@Injectable()
export class UsageAudit {
  constructor(
    @Inject(DATABASE) private readonly db: Database,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly queries: UsageQueries,
  ) {}

  async verify(filter: { accountId?: string; mode?: Mode }): Promise<UsageVerifyReport> {
    const { position, stored } = await this.db.transaction(async (tx) => {
      await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
      const build = await liveBuild(tx, INFERENCE_USAGE_READ_MODEL);
      if (build) await readFromSchema(tx, build.schema);
      return { position: build?.position ?? START, stored: new Map((await this.queries.all(filter, tx)).map((r) => [usageKey(r), r])) };
    });
    const { rows: replayed, calls } = await this.replay(position, filter);
    const keys = [...new Set([...replayed.keys(), ...stored.keys()])].sort();
    for (const key of keys) {
      const expected = replayed.get(key);
      const actual = stored.get(key);
      const where = (expected ?? actual)!;
      for (const field of FIELDS) {
        const e = expected?.[field] ?? '(missing)';
        const a = actual?.[field] ?? '(missing)';
        if (e !== a) {
          const { account_id, mode, day, model } = where;
          return { ok: false, position, rows_checked: keys.length, calls_checked: calls, first_difference: { account_id, mode, day, model, field, expected: e, actual: a } };
        }
      }
    }
    return { ok: true, position, rows_checked: keys.length, calls_checked: calls, first_difference: null };
  }

  private async replay(until: Position, filter: { accountId?: string; mode?: Mode }) {
    const rows = new Map<string, DailyUsage>();
    let calls = 0;
    let after = START;
    while (after < until) {
      const events = await this.store.readAll({ after, limit: BATCH });
      if (!events.length) break;
      for (const recorded of events) {
        if (recorded.position > until) return { rows, calls };
        if (recorded.type !== InferenceEvents.InferenceCallMetered) continue;
        const call = recorded.data as InferenceCallMetered;
        if ((filter.accountId && call.account_id !== filter.accountId) || (filter.mode && call.mode !== filter.mode)) continue;
        addCall(rows, call);
        calls++;
      }
      after = events[events.length - 1].position;
    }
    return { rows, calls };
  }
}
