import { Inject, Injectable } from '@nestjs/common';
import { PAYMENT_PROCESSOR, PaymentProcessor, ProcessorRecord } from '../payments/payment-processor';
import type { Mode } from '../platform/mode';
import { ClearingEntry, JournalQueries } from './journal-queries';

type Kind = ProcessorRecord['kind'];

/** Which processor record each money event's clearing posting stands for. */
const KIND_OF_EVENT: Record<string, Kind> = {
  SaleRecorded: 'charge',
  KeyActivationPaid: 'charge',
  DuplicatePaymentReceived: 'charge',
  ProcessorFeeCharged: 'fee',
  RefundRecorded: 'refund',
  DuplicatePaymentRefunded: 'refund',
  PayoutPaid: 'transfer',
  DisputeOpened: 'dispute',
  // Only a won dispute moves money back through clearing; a lost one posts no clearing line.
  DisputeClosed: 'dispute_reversal',
};

export interface ReconciliationItem {
  kind: Kind;
  /** The processor's id (a payment, fee, refund, transfer or dispute); null for an entry of ours that names none. */
  processor_id: string | null;
  currency: string;
  ledger_cents: number | null;
  processor_cents: number | null;
  /** Our events behind it. */
  event_ids: string[];
}

export interface Reconciliation {
  mode: Mode;
  from: string | null;
  to: string | null;
  ok: boolean;
  matched: number;
  missing_in_ledger: ReconciliationItem[];
  missing_at_processor: ReconciliationItem[];
  amount_mismatches: ReconciliationItem[];
}

/** A reconciliation with the items that matched, which the report only counts (the console lists them). */
export interface DetailedReconciliation extends Reconciliation {
  matched_items: ReconciliationItem[];
}

/**
 * Our clearing account against the processor's own records, item by item: matched when both
 * name the same payment, fee, refund or transfer with the same amount and currency.
 */
export function compareBooks(ours: ClearingEntry[], theirs: ProcessorRecord[]): Omit<Reconciliation, 'mode' | 'from' | 'to'> {
  const { matched_items: _matched, ...report } = compareInDetail(ours, theirs);
  return report;
}

function compareInDetail(ours: ClearingEntry[], theirs: ProcessorRecord[]): Omit<DetailedReconciliation, 'mode' | 'from' | 'to'> {
  const items = new Map<string, ReconciliationItem>();
  const item = (kind: Kind, id: string | null, currency: string, key: string) =>
    items.get(key) ?? items.set(key, { kind, processor_id: id, currency, ledger_cents: null, processor_cents: null, event_ids: [] }).get(key)!;
  ours.forEach((entry, i) => {
    const kind = KIND_OF_EVENT[entry.event_type];
    if (!kind) return;
    // An entry that names no processor id cannot be matched: it stands alone.
    const key = entry.processor_ref ? `${kind}|${entry.processor_ref}|${entry.currency}` : `unnamed|${i}`;
    const it = item(kind, entry.processor_ref, entry.currency, key);
    it.ledger_cents = (it.ledger_cents ?? 0) + entry.amount_cents;
    it.event_ids.push(entry.event_id);
  });
  for (const record of theirs) {
    const it = item(record.kind, record.id, record.currency, `${record.kind}|${record.id}|${record.currency}`);
    it.processor_cents = (it.processor_cents ?? 0) + record.amount_cents;
  }
  const all = [...items.values()];
  const matched = all.filter((i) => i.ledger_cents !== null && i.ledger_cents === i.processor_cents);
  const missingInLedger = all.filter((i) => i.ledger_cents === null);
  const missingAtProcessor = all.filter((i) => i.processor_cents === null);
  const mismatches = all.filter((i) => i.ledger_cents !== null && i.processor_cents !== null && i.ledger_cents !== i.processor_cents);
  return {
    ok: !missingInLedger.length && !missingAtProcessor.length && !mismatches.length,
    matched: matched.length,
    missing_in_ledger: missingInLedger,
    missing_at_processor: missingAtProcessor,
    amount_mismatches: mismatches,
    matched_items: matched,
  };
}

/** Where one processor movement stands in the books (svc ledger adopt). */
export type MovementStanding =
  | { standing: 'missing_in_ledger'; record: ProcessorRecord }
  | { standing: 'booked'; item: ReconciliationItem }
  | { standing: 'unknown' };

/** svc ledger reconcile: the journal's processor:clearing against the processor's books for a period. */
@Injectable()
export class LedgerReconciliation {
  constructor(
    private readonly journal: JournalQueries,
    @Inject(PAYMENT_PROCESSOR) private readonly processor: PaymentProcessor,
  ) {}

  async reconcile(mode: Mode, range: { from?: Date; to?: Date }): Promise<Reconciliation> {
    const { matched_items: _matched, ...report } = await this.reconcileInDetail(mode, range);
    return report;
  }

  /**
   * One processor movement, by its id, against the whole books of the mode: missing in the
   * ledger (with the processor's record of it), booked (matched, or booked with another
   * amount), or unknown to the processor.
   */
  async movement(mode: Mode, processorId: string): Promise<MovementStanding> {
    const [ours, theirs] = await Promise.all([this.journal.clearingEntries(mode, {}), this.processor.records({ mode })]);
    const records = theirs.filter((r) => r.id === processorId);
    if (!records.length) return { standing: 'unknown' };
    const report = compareInDetail(ours, theirs);
    const missing = report.missing_in_ledger.find((i) => i.processor_id === processorId);
    if (missing) return { standing: 'missing_in_ledger', record: records.find((r) => r.kind === missing.kind && r.currency === missing.currency)! };
    const booked = [...report.matched_items, ...report.amount_mismatches].find((i) => i.processor_id === processorId);
    return booked ? { standing: 'booked', item: booked } : { standing: 'unknown' };
  }

  /** The same comparison, keeping the matched items (the console shows them). */
  async reconcileInDetail(mode: Mode, range: { from?: Date; to?: Date }): Promise<DetailedReconciliation> {
    const [ours, theirs] = await Promise.all([this.journal.clearingEntries(mode, range), this.processor.records({ mode, ...range })]);
    return { mode, from: range.from?.toISOString() ?? null, to: range.to?.toISOString() ?? null, ...compareInDetail(ours, theirs) };
  }
}
