/**
 * Closing the books (issue 38, section 3): the journal's hash chain checked against the log
 * (`svc ledger verify --digests`) and period closes (`svc ledger close`, `svc ledger periods`).
 * docs/ledger.md, "Closing the books", is its prose.
 */
import { Inject, Injectable } from '@nestjs/common';
import { createHash, randomUUID } from 'node:crypto';
import { DATABASE, Database } from '../database/database';
import { EVENT_STORE, EventStore, Position, RecordedEvent, START, WrongExpectedRevisionError } from '../event-store/event-store';
import { ApiError, Errors } from '../platform/errors';
import type { Mode } from '../platform/mode';
import { Streams } from '../platform/streams';
import { liveBuild, readFromSchema } from '../projection-runner/read-model-builds';
import { EventWriter } from '../projection-runner/event-writer';
import { closesAtOf, JOURNAL_EVENT_TYPES, journalOf, Posting, trialBalanceRow } from './journal';
import { ChainEntry, chainOf, entriesOf, entryDigest, GENESIS_DIGEST } from './journal-chain';
import { JOURNAL_READ_MODEL, toPosting, TrialBalanceAccount } from './journal-queries';

/** A period's trial balance as its close recorded it: what was booked strictly before `closes_at`. */
export interface ClosedTrialBalance {
  accounts: TrialBalanceAccount[];
  currency_totals: { currency: string; debits_cents: number; credits_cents: number }[];
}

/** PeriodClosed, on the mode's books stream (`books-<mode>`). */
export interface PeriodClosed {
  period_id: string;
  mode: Mode;
  /** The period's last day (UTC), yyyy-mm-dd. */
  through: string;
  /** Where the period starts: the previous close's closes_at; null for the first close (the start of the books). */
  starts_at: string | null;
  /** The first instant after the period (midnight UTC after `through`): the first open instant. */
  closes_at: string;
  closed_at: string;
  trial_balance: ClosedTrialBalance;
  /** The journal's hash chain head of the mode when it closed: its last entry; null for empty books. */
  digest: { seq: number; event_id: string; digest: string } | null;
  /** The log position the close read the journal to. */
  log_position: string;
  actor: string | null;
}

export interface Period extends Omit<PeriodClosed, 'log_position'> {
  object: 'period';
  event_id: string;
}

export interface DigestDifference {
  mode: string;
  seq: number;
  event_id: string | null;
  event_type: string | null;
  check: 'postings_changed' | 'digest_differs' | 'entry_missing' | 'entry_extra' | 'period_differs';
  message: string;
  stored_digest: string | null;
  expected_digest: string | null;
  /** The first posting of the entry that differs from the log, when one does. */
  posting_id: string | null;
}

export interface DigestReport {
  ok: boolean;
  /** The event-log position the journal was checked at. */
  position: Position;
  chains: { mode: string; entries: number; head: { seq: number; digest: string } | null }[];
  periods_checked: number;
  /** The first entry that differs, per mode, and every closed period whose figures differ. */
  differences: DigestDifference[];
}

const BATCH = 1000;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

export const BooksErrors = {
  periodNotEnded: (through: string, closesAt: string) =>
    new ApiError(400, 'period_not_ended', `The period through ${through} has not ended: it ends at ${closesAt}. Close a period only once its last day is over.`),
  alreadyClosed: (mode: string, through: string) =>
    new ApiError(409, 'period_already_closed', `The ${mode} books are closed through ${through} already; a close must end after the last one.`),
  keyReused: (key: string, through: string) =>
    new ApiError(400, 'idempotency_key_reused', `The Idempotency-Key "${key}" closed the period through ${through}; this request's body differs. Use a new key for a different request.`, { differs: 'body' }),
} as const;

@Injectable()
export class Books {
  constructor(
    @Inject(DATABASE) private readonly db: Database,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly writer: EventWriter,
  ) {}

  /**
   * Closes the mode's books through the end of `through` (a UTC day): appends PeriodClosed with
   * the trial balance of what was booked before it ended and the chain head, both computed from
   * the log with the pure journal (never from the read model, which may lag or be changed).
   */
  async close(mode: Mode, through: unknown, actor: string | null = null, now = new Date(), idempotencyKey?: string): Promise<Period> {
    const closesAt = closesAtParam(through);
    const day = through as string;
    if (closesAt.getTime() > now.getTime()) throw BooksErrors.periodNotEnded(day, closesAt.toISOString());
    const stream = Streams.books(mode);
    const history = await this.store.readStream(stream);
    // Under an Idempotency-Key the period's id is derived from the key: a retry whose first run
    // closed the period and died before its answer was kept (kill -9) answers that close.
    const periodId = idempotencyKey === undefined ? `per_${randomUUID().replace(/-/g, '').slice(0, 24)}` : `per_${createHash('sha256').update(`close\n${mode}\n${idempotencyKey}`).digest('hex').slice(0, 24)}`;
    const same = history.find((e) => e.type === 'PeriodClosed' && (e.data as unknown as PeriodClosed).period_id === periodId);
    if (same) {
      const closed = same.data as unknown as PeriodClosed;
      if (closed.through !== day) throw BooksErrors.keyReused(idempotencyKey!, closed.through);
      return toPeriod(closed, same.id);
    }
    const last = history.filter((e) => e.type === 'PeriodClosed').at(-1)?.data as PeriodClosed | undefined;
    if (last && closesAtOf(last) >= closesAt.toISOString()) throw BooksErrors.alreadyClosed(mode, last.through);

    const { events, position } = await this.readLog();
    const postings = journalOf(events.filter((e) => e.data.mode === mode));
    const chain = chainOf(postings);
    const head = chain.at(-1);
    const period: PeriodClosed = {
      period_id: periodId,
      mode,
      through: day,
      starts_at: last ? last.closes_at : null,
      closes_at: closesAt.toISOString(),
      closed_at: now.toISOString(),
      trial_balance: trialBalanceOf(postings, closesAt.toISOString()),
      digest: head ? { seq: head.seq, event_id: head.event_id, digest: head.digest } : null,
      log_position: position,
      actor,
    };
    const expected = history.length ? history[history.length - 1].revision : 'no_stream';
    try {
      const appended = await this.writer.append(stream, [{ type: 'PeriodClosed', data: period as unknown as Record<string, unknown> }], expected);
      const recorded = await this.store.readStream(stream, { fromRevision: appended.nextRevision });
      return toPeriod(period, recorded[0]?.id ?? '');
    } catch (error) {
      // Another close of these books won the race: this one may end no later than it.
      if (error instanceof WrongExpectedRevisionError) throw BooksErrors.alreadyClosed(mode, day);
      throw error;
    }
  }

  /** The mode's closed periods, oldest first, as the journal read model keeps them. */
  async periods(mode: Mode): Promise<{ items: Period[] }> {
    const { rows } = await this.db.query(`SELECT * FROM journal_periods WHERE mode = $1 ORDER BY closes_at`, [mode]);
    return {
      items: rows.map((r) => ({
        object: 'period',
        period_id: r.period_id,
        mode: r.mode,
        through: typeof r.through === 'string' ? r.through : new Date(r.through).toISOString().slice(0, 10),
        starts_at: r.starts_at && new Date(r.starts_at).toISOString(),
        closes_at: new Date(r.closes_at).toISOString(),
        closed_at: new Date(r.closed_at).toISOString(),
        trial_balance: sortedTrialBalance(typeof r.trial_balance === 'string' ? JSON.parse(r.trial_balance) : r.trial_balance),
        digest: r.digest === null ? null : { seq: Number(r.digest_seq), event_id: r.digest_event, digest: r.digest },
        actor: r.actor,
        event_id: r.event_id,
      })),
    };
  }

  /**
   * `svc ledger verify --digests`: at the position the live journal build has read to,
   * recomputes each mode's hash chain from the log (the pure journal) and from the stored
   * postings, and names the first entry where the stored digest, the stored postings or the
   * log disagree; then checks every closed period's digest and trial balance against the log.
   */
  async verifyDigests(filter: { mode?: Mode }): Promise<DigestReport> {
    const { position, stored, chain, periods } = await this.db.transaction(async (tx) => {
      await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
      const build = await liveBuild(tx, JOURNAL_READ_MODEL);
      if (build) await readFromSchema(tx, build.schema);
      const where = filter.mode ? 'WHERE mode = $1' : '';
      const params = filter.mode ? [filter.mode] : [];
      const p = await tx.query(`SELECT * FROM journal_postings ${where} ORDER BY position, posting_id`, params);
      const c = await tx.query(`SELECT * FROM journal_chain ${where} ORDER BY mode, seq`, params);
      const d = await tx.query(`SELECT * FROM journal_periods ${where} ORDER BY mode, closes_at`, params);
      return { position: build?.position ?? START, stored: p.rows.map(toPosting), chain: c.rows, periods: d.rows };
    });
    const { events } = await this.readLog(position);
    const derived = journalOf(events.filter((e) => !filter.mode || e.data.mode === filter.mode));
    const expected = chainOf(derived);
    const differences: DigestDifference[] = [];
    const modes = [...new Set([...expected.map((e) => e.mode), ...chain.map((e) => e.mode as string)])].sort();
    const storedByEvent = new Map(entriesOf(stored).map((entry) => [entry[0].event_id, entry]));
    const derivedByEvent = new Map(entriesOf(derived).map((entry) => [entry[0].event_id, entry]));
    const chains: DigestReport['chains'] = [];
    for (const mode of modes) {
      const mine = expected.filter((e) => e.mode === mode);
      const kept = chain.filter((e) => e.mode === mode).map((r): ChainEntry => ({ mode: r.mode, seq: Number(r.seq), event_id: r.event_id, event_type: r.event_type, position: r.position, digest: r.digest }));
      chains.push({ mode, entries: kept.length, head: kept.length ? { seq: kept[kept.length - 1].seq, digest: kept[kept.length - 1].digest } : null });
      const first = firstDifference(mode, mine, kept, storedByEvent, derivedByEvent);
      if (first) differences.push(first);
    }
    for (const r of periods) {
      const closesAt = new Date(r.closes_at).toISOString();
      const recorded = typeof r.trial_balance === 'string' ? JSON.parse(r.trial_balance) : r.trial_balance;
      const fromLog = trialBalanceOf(
        derived.filter((p) => p.mode === r.mode),
        closesAt,
      );
      const at = r.digest_seq === null ? undefined : expected.find((e) => e.mode === r.mode && e.seq === Number(r.digest_seq));
      const base = { mode: r.mode, seq: Number(r.digest_seq ?? 0), event_id: r.event_id, event_type: 'PeriodClosed', check: 'period_differs' as const, posting_id: null };
      if (r.digest !== null && at?.digest !== r.digest) {
        differences.push({ ...base, stored_digest: r.digest, expected_digest: at?.digest ?? null, message: `period ${r.period_id} (${r.mode}, through ${closesAt}) recorded chain digest ${r.digest} at entry ${r.digest_seq}, but the log gives ${at?.digest ?? 'no such entry'}` });
      } else if (JSON.stringify(sortedTrialBalance(recorded)) !== JSON.stringify(sortedTrialBalance(fromLog))) {
        differences.push({ ...base, stored_digest: r.digest, expected_digest: at?.digest ?? null, message: `period ${r.period_id} (${r.mode}) recorded a trial balance that differs from what the log books before ${closesAt}` });
      }
    }
    return { ok: differences.length === 0, position, chains, periods_checked: periods.length, differences };
  }

  /** The journal's events of the log (up to `upTo` when given), oldest first, and the position read to. */
  private async readLog(upTo?: Position): Promise<{ events: RecordedEvent[]; position: Position }> {
    const events: RecordedEvent[] = [];
    let position: Position = START;
    for (let after = START; ; ) {
      const batch = await this.store.readAll({ after, limit: BATCH });
      for (const e of batch) {
        if (upTo !== undefined && e.position > upTo) return { events, position };
        position = e.position;
        if ((JOURNAL_EVENT_TYPES as readonly string[]).includes(e.type)) events.push(e);
      }
      if (batch.length < BATCH) return { events, position };
      after = batch[batch.length - 1].position;
    }
  }
}

/** The first instant after the period `through` names (yyyy-mm-dd, UTC): 400 naming the field otherwise. */
export function closesAtParam(through: unknown): Date {
  const start = typeof through === 'string' && DAY.test(through) ? new Date(`${through}T00:00:00Z`) : undefined;
  if (!start || Number.isNaN(start.getTime()) || start.toISOString().slice(0, 10) !== through) {
    throw Errors.validationFailed('Invalid field "through": must be the period\'s last day, yyyy-mm-dd (UTC), such as 2026-10-31.');
  }
  return new Date(start.getTime() + 86_400_000);
}

/** The trial balance of what `postings` book strictly before `before`, by account and currency. */
export function trialBalanceOf(postings: readonly Posting[], before: string): ClosedTrialBalance {
  const sums = new Map<string, TrialBalanceAccount>();
  for (const p of postings) {
    if (p.recorded_at >= before) continue;
    const key = `${p.account}|${p.currency}`;
    const a = sums.get(key) ?? { account: p.account, currency: p.currency, debits_cents: 0, credits_cents: 0, balance_cents: 0 };
    a.debits_cents += p.debit_cents;
    a.credits_cents += p.credit_cents;
    sums.set(key, a);
  }
  const accounts = [...sums.values()].map((a) => trialBalanceRow(a.account, a.currency, a.debits_cents, a.credits_cents));
  return sortedTrialBalance({ accounts, currency_totals: [] }, true);
}

/** Accounts in code-point order, and (with `totals`) the currency totals recomputed from them. */
function sortedTrialBalance(tb: ClosedTrialBalance, totals = false): ClosedTrialBalance {
  const order = (a: { account?: string; currency: string }, b: { account?: string; currency: string }) =>
    (a.account ?? '') < (b.account ?? '') ? -1 : (a.account ?? '') > (b.account ?? '') ? 1 : a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0;
  // In one key order (jsonb keeps its own), so two trial balances compare as text.
  const accounts = tb.accounts
    .map((a) => ({ account: a.account, currency: a.currency, debits_cents: a.debits_cents, credits_cents: a.credits_cents, balance_cents: a.balance_cents }))
    .sort(order);
  if (!totals) {
    return { accounts, currency_totals: tb.currency_totals.map((t) => ({ currency: t.currency, debits_cents: t.debits_cents, credits_cents: t.credits_cents })).sort(order) };
  }
  const byCurrency = new Map<string, { currency: string; debits_cents: number; credits_cents: number }>();
  for (const a of accounts) {
    const t = byCurrency.get(a.currency) ?? { currency: a.currency, debits_cents: 0, credits_cents: 0 };
    t.debits_cents += a.debits_cents;
    t.credits_cents += a.credits_cents;
    byCurrency.set(a.currency, t);
  }
  return { accounts, currency_totals: [...byCurrency.values()].sort(order) };
}

function toPeriod(p: PeriodClosed, eventId: string): Period {
  const { log_position: _, ...rest } = p;
  return { object: 'period', ...rest, event_id: eventId };
}

/**
 * The first entry of one mode's chain where the journal and the log disagree: its stored
 * postings no longer hash to its stored digest (a posting changed in the read model), or its
 * digest is not the log's (an entry changed, missing or added).
 */
function firstDifference(
  mode: string,
  expected: ChainEntry[],
  kept: ChainEntry[],
  storedByEvent: Map<string, Posting[]>,
  derivedByEvent: Map<string, Posting[]>,
): DigestDifference | undefined {
  let previous = GENESIS_DIGEST;
  for (let i = 0; i < Math.max(expected.length, kept.length); i++) {
    const want = expected[i];
    const have = kept[i];
    if (!have) return { mode, seq: want.seq, event_id: want.event_id, event_type: want.event_type, check: 'entry_missing', stored_digest: null, expected_digest: want.digest, posting_id: null, message: `entry ${want.seq} (${mode}): event ${want.event_id} (${want.event_type}) posts in the log but is not chained in the journal` };
    if (!want) return { mode, seq: have.seq, event_id: have.event_id, event_type: have.event_type, check: 'entry_extra', stored_digest: have.digest, expected_digest: null, posting_id: null, message: `entry ${have.seq} (${mode}): event ${have.event_id} (${have.event_type}) is chained in the journal but posts nothing in the log` };
    const postings = storedByEvent.get(have.event_id) ?? [];
    const changed = have.event_id === want.event_id ? firstChangedPosting(postings, derivedByEvent.get(have.event_id) ?? []) : undefined;
    if (changed) {
      return {
        mode,
        seq: have.seq,
        event_id: have.event_id,
        event_type: have.event_type,
        check: 'postings_changed',
        stored_digest: have.digest,
        expected_digest: want.digest,
        posting_id: changed.posting_id,
        message: `entry ${have.seq} (${mode}): the postings of event ${have.event_id} (${have.event_type}) differ from the log and ${entryDigest(previous, postings) === have.digest ? 'still' : 'no longer'} hash to its digest; posting ${changed.posting_id}: ${changed.what}`,
      };
    }
    if (have.digest !== want.digest || have.event_id !== want.event_id || entryDigest(previous, postings) !== have.digest) {
      return { mode, seq: have.seq, event_id: have.event_id, event_type: have.event_type, check: 'digest_differs', stored_digest: have.digest, expected_digest: want.digest, posting_id: null, message: `entry ${have.seq} (${mode}): digest ${have.digest} of event ${have.event_id} (${have.event_type}) in the journal, but the log gives ${want.digest} (event ${want.event_id})` };
    }
    previous = have.digest;
  }
  return undefined;
}

function firstChangedPosting(stored: Posting[], derived: Posting[]): { posting_id: string; what: string } | undefined {
  for (let i = 0; i < Math.max(stored.length, derived.length); i++) {
    const have = stored[i];
    const want = derived[i];
    if (!have || !want) return { posting_id: (have ?? want).posting_id, what: have ? 'not derived from the log' : 'missing from the journal' };
    for (const field of new Set([...Object.keys(want), ...Object.keys(have)]) as Set<keyof Posting>) {
      if (have[field] !== want[field]) return { posting_id: want.posting_id, what: `${field} is ${JSON.stringify(have[field])} in the journal but ${JSON.stringify(want[field])} from the log` };
    }
  }
  return undefined;
}
