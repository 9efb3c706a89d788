/**
 * The double-entry journal: every money event, through one pure function, becomes a set of
 * postings that balances per currency (debits = credits) on named accounts of the creator,
 * the platform and the processor. No I/O, no clock: the journal projection stores what this
 * returns, `svc ledger verify` recomputes it from the log, and docs/ledger.md is its prose.
 */
import type { RecordedEvent } from '../event-store/event-store';
import type { Mode } from '../platform/mode';

/** The chart of accounts (docs/ledger.md); every account is kept per mode and currency. */
export const Accounts = {
  clearing: 'processor:clearing',
  feeRevenue: 'platform:fee_revenue',
  activationRevenue: 'platform:activation_revenue',
  processorFees: 'platform:processor_fees',
  disputes: 'platform:disputes',
  suspense: 'platform:suspense',
  /** Adjusting entries' expense: write-offs, goodwill credits (svc ledger adjust). */
  adjustments: 'platform:adjustments',
  payable: (accountId: string) => `creator:${accountId}:payable`,
  inTransit: (accountId: string) => `creator:${accountId}:in_transit`,
  withheld: (accountId: string) => `creator:${accountId}:withheld`,
} as const;

/** Assets and expenses grow with debits; liabilities and revenue with credits. */
export function isDebitNormal(account: string): boolean {
  return account === Accounts.clearing || account === Accounts.disputes || account === Accounts.processorFees || account === Accounts.adjustments;
}

/** One account's line of a trial balance. */
export interface TrialBalanceRow {
  account: string;
  currency: string;
  debits_cents: number;
  credits_cents: number;
  /** In the account's own sign: debits - credits for assets and expenses, credits - debits otherwise. */
  balance_cents: number;
}

/**
 * How a trial balance shows an account's debits and credits: in its own sign, except that a
 * creator's payable below zero is what the creator owes the platform (a refund or lost dispute
 * after a payout), shown as the asset `creator:<id>:receivable` instead of a negative liability.
 */
export function trialBalanceRow(account: string, currency: string, debits: number, credits: number): TrialBalanceRow {
  const owner = /^creator:(.+):payable$/.exec(account)?.[1];
  if (owner !== undefined && debits > credits) return { account: `creator:${owner}:receivable`, currency, debits_cents: debits, credits_cents: credits, balance_cents: debits - credits };
  return { account, currency, debits_cents: debits, credits_cents: credits, balance_cents: isDebitNormal(account) ? debits - credits : credits - debits };
}

export interface Posting {
  /** `<event id>:<n>`: the same event always yields the same ids, so a rebuild reproduces them. */
  posting_id: string;
  event_id: string;
  event_type: string;
  position: string;
  /**
   * When the event says it happened, as the command that recorded it stamped it (a sale's
   * created_at, a payout's arrival_date, ...): what a balance "as of" a moment counts. The
   * events of one ledger never go back in time (ledger.decider.ts), so the last posting of a
   * creator's account at or before a moment holds its balance then.
   */
  recorded_at: string;
  /**
   * Only on a posting booked later than it happened: the event's own time, when it fell in a
   * period already closed (a late dispute, an adopted refund). Such a posting is booked
   * (`recorded_at`, the journal's booked_at) at the first instant of the first open day.
   */
  occurred_at?: string;
  /** Only on an adjusting entry's postings (svc ledger adjust): booked by hand, with why and by whom. */
  kind?: 'manual';
  reason?: string | null;
  actor?: string | null;
  mode: Mode;
  currency: string;
  account: string;
  debit_cents: number;
  credit_cents: number;
  /** What the money concerns: a purchase, a payout or a checkout session id. */
  reference: string | null;
  /** The processor's own id for it (payment, refund or transfer), when the event names one. */
  processor_ref: string | null;
}

export type JournalEvent = Pick<RecordedEvent, 'id' | 'type' | 'data' | 'position'>;

/** An amount an earlier event opened: a payout put in transit, a duplicate payment held in suspense. */
export interface Opened {
  amount_cents: number;
  currency: string;
}

/** Event types that post to the journal. */
export const JOURNAL_EVENT_TYPES = [
  'SaleRecorded',
  'RefundRecorded',
  'PayoutInitiated',
  'PayoutPaid',
  'PayoutFailed',
  'KeyActivationPaid',
  'DuplicatePaymentReceived',
  'DuplicatePaymentRefunded',
  'ProcessorFeeCharged',
  'DisputeOpened',
  'DisputeClosed',
  'ManualEntryRecorded',
  'AdjustmentRecorded',
  // Posts nothing: closes a period, after which later events that belong to it are booked on the first open day.
  'PeriodClosed',
] as const;

/**
 * Events that close what an earlier event opened, and the reference (in the journal) and
 * account under which it was opened. Events recorded before they carried their amount are
 * posted with the amount the journal shows opened.
 */
export function closes(event: Pick<JournalEvent, 'type' | 'data'>): { reference: string; account: string } | undefined {
  const d = event.data;
  switch (event.type) {
    case 'PayoutPaid':
      return { reference: d.payout.id, account: Accounts.inTransit(d.account_id) };
    case 'PayoutFailed':
      return { reference: d.payout_id, account: Accounts.inTransit(d.account_id) };
    case 'DuplicatePaymentRefunded':
      return { reference: d.session_id, account: Accounts.suspense };
  }
  return undefined;
}

/** Thrown for an event the journal cannot post (its projection stops on it: money is never skipped). */
export class UnpostableEventError extends Error {}

/**
 * The postings of one event, [] for an event that moves no money. `opened` is what the
 * journal shows open under `closes(event)` (undefined: not looked up; null: nothing open):
 * a PayoutPaid with nothing in transit is a payout from before payouts had two steps, paid
 * straight from the payable balance.
 */
export function postingsOf(event: JournalEvent, opened?: Opened | null, closedBefore?: string): Posting[] {
  const d = event.data;
  const lines: [account: string, debit: number, credit: number][] = [];
  let currency: string = d.currency;
  let reference: string | null = null;
  let processorRef: string | null = null;
  let manual: { kind: 'manual'; reason: string; actor: string | null } | undefined;
  const amountOf = (what: string): number => {
    const own = d.payout ?? d;
    if (Number.isSafeInteger(own.amount_cents)) {
      currency = own.currency;
      return own.amount_cents;
    }
    if (opened) {
      currency = opened.currency;
      return opened.amount_cents;
    }
    throw new UnpostableEventError(`${event.type} ${event.id} carries no amount and the journal shows no ${what} open for it`);
  };
  switch (event.type) {
    case 'SaleRecorded':
      reference = d.purchase_id;
      processorRef = d.payment_reference ?? null;
      lines.push([Accounts.clearing, d.amount_cents, 0], [Accounts.payable(d.account_id), 0, d.net_cents], [Accounts.feeRevenue, 0, d.fee_cents]);
      break;
    case 'RefundRecorded':
      // A refund's amounts are its sale's, negated: the sale's lines, reversed.
      reference = d.purchase_id;
      processorRef = d.processor_refund_id ?? null;
      lines.push([Accounts.payable(d.account_id), -d.net_cents, 0], [Accounts.feeRevenue, -d.fee_cents, 0], [Accounts.clearing, 0, -d.amount_cents]);
      break;
    case 'PayoutInitiated':
      reference = d.payout_id;
      lines.push([Accounts.payable(d.account_id), d.amount_cents, 0], [Accounts.inTransit(d.account_id), 0, d.amount_cents]);
      break;
    case 'PayoutPaid': {
      reference = d.payout.id;
      processorRef = d.transfer_id ?? null;
      currency = d.payout.currency;
      const from = opened === null ? Accounts.payable(d.account_id) : Accounts.inTransit(d.account_id);
      lines.push([from, d.payout.amount_cents, 0], [Accounts.clearing, 0, d.payout.amount_cents]);
      break;
    }
    case 'PayoutFailed': {
      reference = d.payout_id;
      const amount = amountOf('payout in transit');
      lines.push([Accounts.inTransit(d.account_id), amount, 0], [Accounts.payable(d.account_id), 0, amount]);
      break;
    }
    case 'KeyActivationPaid':
      reference = d.session_id;
      processorRef = d.payment_reference;
      lines.push([Accounts.clearing, d.amount_cents, 0], [Accounts.activationRevenue, 0, d.amount_cents]);
      break;
    case 'DuplicatePaymentReceived':
      reference = d.session_id;
      processorRef = d.payment_reference;
      lines.push([Accounts.clearing, d.amount_cents, 0], [Accounts.suspense, 0, d.amount_cents]);
      break;
    case 'DuplicatePaymentRefunded': {
      reference = d.session_id;
      processorRef = d.processor_refund_id;
      const amount = amountOf('duplicate payment in suspense');
      lines.push([Accounts.suspense, amount, 0], [Accounts.clearing, 0, amount]);
      break;
    }
    case 'DisputeOpened':
      // The processor withdrew the disputed amount and its dispute fee; the creator's net of it is held.
      reference = d.purchase_id;
      processorRef = d.dispute_id;
      lines.push(
        [Accounts.payable(d.account_id), d.withheld_cents, 0],
        [Accounts.disputes, d.amount_cents, 0],
        [Accounts.processorFees, d.dispute_fee_cents, 0],
        [Accounts.withheld(d.account_id), 0, d.withheld_cents],
        [Accounts.clearing, 0, d.amount_cents + d.dispute_fee_cents],
      );
      break;
    case 'DisputeClosed':
      reference = d.purchase_id;
      processorRef = d.dispute_id;
      if (d.outcome === 'won') {
        // The processor returned the amount (not its fee); the held net is the creator's again.
        lines.push([Accounts.clearing, d.amount_cents, 0], [Accounts.withheld(d.account_id), d.withheld_cents, 0], [Accounts.disputes, 0, d.amount_cents], [Accounts.payable(d.account_id), 0, d.withheld_cents]);
      } else {
        // The buyer keeps the money: the held net pays for it, and the platform loses its fee on the sale.
        lines.push([Accounts.withheld(d.account_id), d.withheld_cents, 0], [Accounts.feeRevenue, d.fee_cents, 0], [Accounts.disputes, 0, d.amount_cents]);
      }
      break;
    case 'ProcessorFeeCharged':
      reference = d.session_id;
      processorRef = d.processor_fee_id ?? d.payment_reference;
      lines.push([Accounts.processorFees, d.fee_cents, 0], [Accounts.clearing, 0, d.fee_cents]);
      break;
    case 'ManualEntryRecorded':
    case 'AdjustmentRecorded':
      // An adjusting entry (svc ledger adjust): one debit, one credit, between accounts checked when it was recorded.
      reference = d.entry_id ?? d.transaction_id;
      manual = { kind: 'manual', reason: d.reason, actor: d.actor ?? null };
      lines.push([d.debit_account, d.amount_cents, 0], [d.credit_account, 0, d.amount_cents]);
      break;
    default:
      return [];
  }
  const at = new Date(occurredAt(event));
  if (Number.isNaN(at.getTime())) throw new UnpostableEventError(`${event.type} ${event.id} states no time it happened`);
  const occurred = at.toISOString();
  // Nothing is booked into a closed period: what belongs to one is booked when the books open again.
  const late = closedBefore !== undefined && occurred < closedBefore;
  const recordedAt = late ? closedBefore : occurred;
  return lines
    .filter(([, debit, credit]) => debit !== 0 || credit !== 0)
    .map(([account, debit, credit], n) => ({
      posting_id: `${event.id}:${n}`,
      event_id: event.id,
      event_type: event.type,
      position: event.position,
      recorded_at: recordedAt,
      ...(late ? { occurred_at: occurred } : {}),
      ...manual,
      mode: d.mode,
      currency,
      account,
      debit_cents: debit,
      credit_cents: credit,
      reference,
      processor_ref: processorRef,
    }));
}

/** The time a money event states for itself. */
function occurredAt({ type, data }: Pick<JournalEvent, 'type' | 'data'>): string {
  switch (type) {
    case 'PayoutPaid':
      return data.payout.arrival_date;
    case 'PayoutFailed':
      return data.failed_at;
    case 'KeyActivationPaid':
      return data.paid_at;
    case 'DuplicatePaymentReceived':
      return data.received_at;
    case 'DuplicatePaymentRefunded':
      return data.refunded_at;
    case 'ProcessorFeeCharged':
      return data.charged_at;
    default:
      return data.created_at;
  }
}

/**
 * The whole journal of a run of events, oldest first, with what each closing event needs
 * taken from the postings before it: the reference the projection's SQL is checked against
 * (verify) and the property tests' model.
 */
export function journalOf(events: Iterable<JournalEvent>): Posting[] {
  const opened = new Map<string, Opened>();
  const closed = new Map<string, string>();
  const postings: Posting[] = [];
  for (const event of events) {
    if (event.type === 'PeriodClosed') {
      closed.set(event.data.mode, laterOf(closed.get(event.data.mode), closesAtOf(event.data)));
      continue;
    }
    const closing = closes(event);
    const key = closing && `${event.data.mode}|${closing.reference}|${closing.account}`;
    const made = postingsOf(event, key === undefined ? undefined : opened.get(key) ?? null, closed.get(event.data.mode));
    for (const p of made) {
      if (p.credit_cents > 0 && (p.account === Accounts.suspense || p.account.endsWith(':in_transit'))) {
        opened.set(`${p.mode}|${p.reference}|${p.account}`, { amount_cents: p.credit_cents, currency: p.currency });
      }
    }
    postings.push(...made);
  }
  return postings;
}

/** The first instant after a closed period (ISO 8601, UTC, milliseconds), as the journal compares times. */
export function closesAtOf(period: { closes_at: string }): string {
  return new Date(period.closes_at).toISOString();
}

/** The later of two ISO 8601 UTC instants written alike. */
export function laterOf(a: string | undefined, b: string): string {
  return a !== undefined && a > b ? a : b;
}

/** What a creator's balance did, by reporting category (GET /v1/balance/history's `activity`). */
export interface BalanceActivity {
  sales_cents: number;
  fees_cents: number;
  refunds_cents: number;
  payouts_cents: number;
  disputes_cents: number;
  /** Adjusting entries on the creator's payable (svc ledger adjust). */
  adjustments_cents: number;
}

const CREATOR_BALANCE = /^creator:(.+):(payable|in_transit)$/;

/** The creator whose balance (payable and in transit) an account holds, if any. */
export function balanceOwnerOf(account: string): string | undefined {
  return CREATOR_BALANCE.exec(account)?.[1];
}

/**
 * Each posting of one event's postings attributed to the creator whose balance the event
 * moved, with what it does to each reporting category: the creator's own lines, and the
 * platform's fee on the creator's sale or refund (the buyer paid the sale's amount; the
 * platform kept its fee). A posting of an event that touches no creator's balance has none.
 */
export function balanceEffects(eventPostings: Posting[]): { posting: Posting; accountId: string; activity: BalanceActivity }[] {
  const owners = [...new Set(eventPostings.map((p) => balanceOwnerOf(p.account)).filter((id): id is string => id !== undefined))];
  return owners.flatMap((accountId) =>
    eventPostings.map((posting) => ({ posting, accountId, activity: effectOn(posting, balanceOwnerOf(posting.account) === accountId) })),
  );
}

/** balanceEffects of every event whose postings are among these, event by event. */
export function balanceEffectsOfEach(postings: Posting[]): ReturnType<typeof balanceEffects> {
  const byEvent = new Map<string, Posting[]>();
  for (const p of postings) {
    const ofEvent = byEvent.get(p.event_id);
    if (ofEvent) ofEvent.push(p);
    else byEvent.set(p.event_id, [p]);
  }
  return [...byEvent.values()].flatMap(balanceEffects);
}

function effectOn(p: Posting, mine: boolean): BalanceActivity {
  const activity: BalanceActivity = { sales_cents: 0, fees_cents: 0, refunds_cents: 0, payouts_cents: 0, disputes_cents: 0, adjustments_cents: 0 };
  const credit = p.credit_cents - p.debit_cents;
  const platformFee = !mine && p.account === Accounts.feeRevenue;
  switch (p.event_type) {
    case 'SaleRecorded':
      if (mine) activity.sales_cents += credit;
      else if (platformFee) (activity.sales_cents += credit), (activity.fees_cents -= credit);
      break;
    case 'RefundRecorded':
      if (mine) activity.refunds_cents += credit;
      else if (platformFee) (activity.refunds_cents += credit), (activity.fees_cents -= credit);
      break;
    case 'DisputeOpened':
    case 'DisputeClosed':
      // Withheld, then released when won (a lost dispute leaves the balance as it was withheld).
      if (mine) activity.disputes_cents += credit;
      break;
    case 'PayoutPaid':
    case 'PayoutInitiated':
    case 'PayoutFailed':
      // Between payable and in transit nothing leaves the balance; a paid payout does.
      if (mine) activity.payouts_cents += credit;
      break;
    case 'AdjustmentRecorded':
      if (mine) activity.adjustments_cents += credit;
      break;
  }
  return activity;
}
