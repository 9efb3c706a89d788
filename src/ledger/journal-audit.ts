import { Inject, Injectable } from '@nestjs/common';
import { SETTINGS, Settings } from '../config/settings';
import { DATABASE, Database } from '../database/database';
import { EVENT_STORE, EventStore, Position, RecordedEvent, START } from '../event-store/event-store';
import type { Mode } from '../platform/mode';
import { filteredBy } from '../platform/owner-scope';
import { liveBuild, readFromSchema } from '../projection-runner/read-model-builds';
import { Accounts, JOURNAL_EVENT_TYPES, journalOf, Posting } from './journal';
import { toPosting, JOURNAL_READ_MODEL } from './journal-queries';
import { foldLedgers } from './ledger-audit';

export interface JournalProblem {
  check: 'journal_differs' | 'unbalanced_event' | 'negative_posting' | 'payable_differs' | 'payout_in_transit_too_long' | 'sale_missing' | 'refund_missing' | 'duplicate_not_refunded' | 'fee_missing';
  message: string;
}

export interface JournalReport {
  ok: boolean;
  /** The event-log position the journal was compared at. */
  position: Position;
  postings_checked: number;
  /** Up to 20 problems, first found first. */
  problems: JournalProblem[];
}

/** A payment's consequences (its sale, refund or duplicate's refund) are recorded by a subscriber within moments; older than this they are missing. */
export const CONSEQUENCE_GRACE_MS = 60_000;
const MAX_PROBLEMS = 20;
const BATCH = 1000;

type StoredPosting = Posting & { balance_after_cents: number };

/**
 * The journal half of `svc ledger verify`. At the position the live journal build has read
 * to, it recomputes every posting from the log with the pure journal (never the projection
 * code) and compares them byte for byte, running balances included; checks every event's
 * postings balance; checks each creator's payable and in-transit accounts against the
 * ledger decider's balance; reports payouts in transit too long; and checks completeness
 * across streams: a payment older than a minute has its sale, a refund its debit, a
 * duplicate payment its refund.
 */
@Injectable()
export class JournalAudit {
  constructor(
    @Inject(DATABASE) private readonly db: Database,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  async verify(filter: { mode?: Mode }, now = new Date()): Promise<JournalReport> {
    const { position, stored } = await this.db.transaction(async (tx) => {
      await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
      const build = await liveBuild(tx, JOURNAL_READ_MODEL);
      if (build) await readFromSchema(tx, build.schema);
      const s = filteredBy({ mode: filter.mode });
      const { rows } = await tx.query(`SELECT * FROM journal_postings WHERE ${s.where()} ORDER BY position, posting_id`, s.params);
      return { position: build?.position ?? START, stored: rows.map(toStored) };
    });
    const log = await this.readLog();
    const upTo = log.filter((e) => e.position <= position);
    const problems: JournalProblem[] = [];
    const report = (problem: JournalProblem) => problems.length < MAX_PROBLEMS && problems.push(problem);
    const inMode = (e: { data: { mode?: string } }) => !filter.mode || e.data.mode === filter.mode;

    const derived = journalOf(upTo.filter((e) => (JOURNAL_EVENT_TYPES as readonly string[]).includes(e.type)).filter(inMode));
    this.compare(derived, stored, report);
    this.balanced(stored, report);

    for (const [key, state] of foldLedgers(upTo, filter)) {
      const [accountId, mode] = key.split(':');
      const mine = derived.filter((p) => p.mode === mode);
      const owed = (account: string) => mine.filter((p) => p.account === account).reduce((s, p) => s + p.credit_cents - p.debit_cents, 0);
      const journal = owed(Accounts.payable(accountId)) + owed(Accounts.inTransit(accountId));
      if (journal !== state.summary.balance_cents) {
        report({ check: 'payable_differs', message: `account ${accountId} (${mode}): payable + in transit is ${journal} in the journal but the balance transactions' balance is ${state.summary.balance_cents}` });
      }
      const since = state.inFlight && now.getTime() - Date.parse(state.inFlight.created_at);
      if (state.inFlight && since! > this.settings.payoutInTransitMaxSeconds * 1000) {
        report({ check: 'payout_in_transit_too_long', message: `account ${accountId} (${mode}): payout ${state.inFlight.payout_id} of ${state.inFlight.amount_cents} has been in transit since ${state.inFlight.created_at}` });
      }
    }
    this.complete(log.filter(inMode), now, report);
    return { ok: problems.length === 0, position, postings_checked: stored.length, problems };
  }

  /** The stored journal is the journal the log yields: the same postings, in the same order, with the same running balances. */
  private compare(derived: Posting[], stored: StoredPosting[], report: (p: JournalProblem) => void): void {
    const running = new Map<string, number>();
    for (let i = 0; i < Math.max(derived.length, stored.length); i++) {
      const expected = derived[i];
      const actual = stored[i];
      if (!expected || !actual) {
        const p = expected ?? actual;
        return void report({ check: 'journal_differs', message: `posting ${p.posting_id} (event ${p.event_id}) is ${expected ? 'missing from the journal' : 'in the journal but not derived from the log'}` });
      }
      const key = `${expected.mode}|${expected.account}|${expected.currency}`;
      const balance = (running.get(key) ?? 0) + expected.debit_cents - expected.credit_cents;
      running.set(key, balance);
      for (const field of Object.keys(expected) as (keyof Posting)[]) {
        if (expected[field] !== actual[field]) {
          return void report({ check: 'journal_differs', message: `posting ${expected.posting_id}: ${field} is ${JSON.stringify(actual[field])} in the journal but ${JSON.stringify(expected[field])} from the log` });
        }
      }
      if (actual.balance_after_cents !== balance) {
        return void report({ check: 'journal_differs', message: `posting ${expected.posting_id}: balance_after_cents is ${actual.balance_after_cents} in the journal but ${balance} from the log` });
      }
    }
  }

  private balanced(stored: StoredPosting[], report: (p: JournalProblem) => void): void {
    // A posting moves money one way: a negative debit is a credit booked on the wrong side (issue 38, defect 3).
    for (const p of stored) {
      if (p.debit_cents < 0 || p.credit_cents < 0) report({ check: 'negative_posting', message: `posting ${p.posting_id} (event ${p.event_id}) posts a negative amount to ${p.account}: debit ${p.debit_cents}, credit ${p.credit_cents}` });
    }
    const sums = new Map<string, number>();
    for (const p of stored) sums.set(`${p.event_id}|${p.currency}`, (sums.get(`${p.event_id}|${p.currency}`) ?? 0) + p.debit_cents - p.credit_cents);
    for (const [key, sum] of sums) {
      if (sum !== 0) report({ check: 'unbalanced_event', message: `event ${key.split('|')[0]} posts debits and credits that differ by ${sum} ${key.split('|')[1]}` });
    }
  }

  /** Completeness across streams: what a payment (its sale and its processor fee), a refund and a duplicate payment must have led to, once given a minute. */
  private complete(log: RecordedEvent[], now: Date, report: (p: JournalProblem) => void): void {
    const sold = new Set(log.filter((e) => e.type === 'SaleRecorded').map((e) => `${e.data.mode}|${e.data.purchase_id}`));
    const debited = new Set(log.filter((e) => e.type === 'RefundRecorded').map((e) => `${e.data.mode}|${e.data.purchase_id}`));
    const returned = new Set(log.filter((e) => e.type === 'DuplicatePaymentRefunded').map((e) => `${e.data.mode}|${e.data.session_id}`));
    const charged = new Set(log.filter((e) => e.type === 'ProcessorFeeCharged').map((e) => `${e.data.mode}|${e.data.session_id}`));
    const old = (at: string) => now.getTime() - Date.parse(at) > CONSEQUENCE_GRACE_MS;
    for (const e of log) {
      const d = e.data;
      if (e.type === 'PurchaseCompleted' && old(d.completed_at) && !sold.has(`${d.mode}|${d.purchase_id}`)) {
        report({ check: 'sale_missing', message: `purchase ${d.purchase_id} (${d.mode}) was paid at ${d.completed_at} but no sale is recorded for it` });
      }
      if (e.type === 'PurchaseRefunded' && old(d.refunded_at) && !debited.has(`${d.mode}|${d.purchase_id}`)) {
        report({ check: 'refund_missing', message: `purchase ${d.purchase_id} (${d.mode}) was refunded at ${d.refunded_at} but its sale was never debited` });
      }
      if (e.type === 'DuplicatePaymentReceived' && old(d.received_at) && !returned.has(`${d.mode}|${d.session_id}`)) {
        report({ check: 'duplicate_not_refunded', message: `duplicate payment ${d.payment_reference} of session ${d.session_id} (${d.mode}) was never refunded: refund it at the processor` });
      }
      // Every payment the processor took, it charged a fee on (issue 38, defect 2): booked by the paying request or the fulfilment subscriber.
      const paidAt = e.type === 'PurchaseCompleted' ? d.completed_at : e.type === 'KeyActivationPaid' ? d.paid_at : e.type === 'DuplicatePaymentReceived' ? d.received_at : undefined;
      if (paidAt && old(paidAt) && !charged.has(`${d.mode}|${d.session_id}`)) {
        report({ check: 'fee_missing', message: `payment ${d.payment_reference} of session ${d.session_id} (${d.mode}) was taken at ${paidAt} but the processor's fee on it is not booked` });
      }
    }
  }

  private async readLog(): Promise<RecordedEvent[]> {
    const events: RecordedEvent[] = [];
    for (let after = START; ; ) {
      const batch = await this.store.readAll({ after, limit: BATCH });
      events.push(...batch);
      if (batch.length < BATCH) return events;
      after = batch[batch.length - 1].position;
    }
  }
}

function toStored(row: any): StoredPosting {
  return { ...toPosting(row), balance_after_cents: Number(row.balance_after_cents) };
}
