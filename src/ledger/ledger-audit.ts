import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, Database } from '../database/database';
import { EVENT_STORE, EventStore, Position, RecordedEvent, START } from '../event-store/event-store';
import type { Mode } from '../platform/mode';
import type { LedgerEvent } from './events';
import { evolve, initialState, LedgerState, summaryOf, transactionsOf } from './ledger.decider';
import { emptyLedger, LedgerQueries, BALANCE_TRANSACTIONS_READ_MODEL } from './ledger-queries';
import { isLedgerEvent, toLedgerEvent } from './ledger-streams';
import { liveBuild, readFromSchema } from '../projection-runner/read-model-builds';

export interface LedgerDifference {
  account_id: string;
  mode: Mode;
  /** The balance transaction that differs, or null for the summary and payouts_paused. */
  transaction_id: string | null;
  field: string;
  /** From the event log. */
  expected: unknown;
  /** From the read model. */
  actual: unknown;
}

export interface VerifyReport {
  ok: boolean;
  /** The event-log position both sides were compared at. */
  position: Position;
  ledgers_checked: number;
  transactions_checked: number;
  first_difference: LedgerDifference | null;
}

const BATCH = 1000;
const MISSING = '(missing)';

/** { a: { b: 1 } } -> { "a.b": 1 }, so a difference names the exact field. */
function flatten(value: unknown, prefix = '', out: Record<string, unknown> = {}): Record<string, unknown> {
  if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else {
    out[prefix] = value;
  }
  return out;
}

function firstFieldDifference(expected: unknown, actual: unknown): { field: string; expected: unknown; actual: unknown } | null {
  const e = flatten(expected);
  const a = flatten(actual);
  for (const field of new Set([...Object.keys(e), ...Object.keys(a)])) {
    const ev = field in e ? e[field] : MISSING;
    const av = field in a ? a[field] : MISSING;
    if (ev !== av) return { field, expected: ev, actual: av };
  }
  return null;
}

/**
 * `svc ledger verify`: replays the ledger events from the start through the pure decider's
 * evolve (never the projection code) and compares every ledger's balance transactions,
 * summary and payouts_paused with the read model, field by field. The read model and the
 * checkpoint of the build serving it are read in one repeatable-read snapshot; the events
 * are then read up to that checkpoint through the port, outside any transaction (issue
 * 13): events at or before a position a consumer passed never change, so writes running
 * meanwhile cannot show up as differences.
 */
@Injectable()
export class LedgerAudit {
  constructor(
    @Inject(DATABASE) private readonly db: Database,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly queries: LedgerQueries,
  ) {}

  async verify(filter: { accountId?: string; mode?: Mode }): Promise<VerifyReport> {
    const { position, stored, transactions } = await this.db.transaction(async (tx) => {
      await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
      // One build, read directly: a rebuild switching the views meanwhile changes nothing here.
      const build = await liveBuild(tx, BALANCE_TRANSACTIONS_READ_MODEL);
      if (build) await readFromSchema(tx, build.schema);
      return {
        position: build?.position ?? START,
        stored: new Map((await this.queries.ledgers(filter, tx)).map((l) => [`${l.account_id}:${l.mode}`, l])),
        transactions: await this.queries.transactionsByLedger(filter, tx),
      };
    });
    const replayed = await this.replay(position, filter);
    const keys = new Set([...replayed.keys(), ...stored.keys()]);
    let transactionsChecked = 0;
    for (const key of [...keys].sort()) {
      const [accountId, mode] = key.split(':') as [string, Mode];
      const state = replayed.get(key) ?? initialState();
      // Compared as the API reads it: no row is the empty ledger (a destination alone makes none).
      const ledger = stored.get(key) ?? emptyLedger(accountId, mode);
      const where = { account_id: accountId, mode };
      const report = (difference: Omit<LedgerDifference, 'account_id' | 'mode'>): VerifyReport => ({
        ok: false,
        position,
        ledgers_checked: keys.size,
        transactions_checked: transactionsChecked,
        first_difference: { ...where, ...difference },
      });

      const head = firstFieldDifference(
        { summary: summaryOf(state), payouts_paused: state.paused },
        { summary: ledger.summary, payouts_paused: ledger.payouts_paused },
      );
      if (head) return report({ transaction_id: null, ...head });

      const expected = transactionsOf(state);
      const actual = transactions.get(key) ?? [];
      for (let i = 0; i < Math.max(expected.length, actual.length); i++) {
        transactionsChecked++;
        const diff = firstFieldDifference(expected[i] ?? {}, actual[i] ?? {});
        if (diff) return report({ transaction_id: (expected[i] ?? actual[i]).id, ...diff });
      }
    }
    return { ok: true, position, ledgers_checked: keys.size, transactions_checked: transactionsChecked, first_difference: null };
  }

  /** Ledger states by "account:mode", folded from every ledger event up to `until`. */
  private async replay(until: Position, filter: { accountId?: string; mode?: Mode }): Promise<Map<string, LedgerState>> {
    const states = new Map<string, LedgerState>();
    let after = START;
    while (after < until) {
      const events = await this.store.readAll({ after, limit: BATCH });
      if (!events.length) break;
      foldLedgers(events.filter((e) => e.position <= until), filter, states);
      after = events[events.length - 1].position;
    }
    return states;
  }
}

/** Folds the ledger events among `events` (of one account and/or mode) into `states`, by "account:mode", through the decider's evolve. */
export function foldLedgers(events: Iterable<RecordedEvent>, filter: { accountId?: string; mode?: Mode }, states = new Map<string, LedgerState>()): Map<string, LedgerState> {
  for (const recorded of events) {
    if (!isLedgerEvent(recorded)) continue;
    const event: LedgerEvent = toLedgerEvent(recorded);
    const { account_id, mode } = event.data;
    if ((filter.accountId && account_id !== filter.accountId) || (filter.mode && mode !== filter.mode)) continue;
    const key = `${account_id}:${mode}`;
    states.set(key, evolve(states.get(key) ?? initialState(), event));
  }
  return states;
}
