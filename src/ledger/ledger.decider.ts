/**
 * The creator ledger as a pure decider (initialState / evolve / decide): no I/O, no clock,
 * no id generation; the command carries those. The arithmetic is decisions.md section 4.
 * `svc ledger verify` replays the log through evolve, so this file is also the auditor's
 * definition of every balance transaction and summary.
 */
import { Errors } from '../platform/errors';
import { isMode, Mode } from '../platform/mode';
import type { AssetRef, DisputeClosed, DisputeOpened, LedgerEvent, Payout, PayoutInitiated } from './events';
import { LedgerErrors } from './ledger.errors';

export const DEFAULT_CURRENCY = 'usd';

export const TRANSACTION_TYPES = ['sale', 'refund', 'payout', 'dispute', 'dispute_reversal', 'adjustment'] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];
export type TransactionStatus = 'pending' | 'paid';

/** An item of GET /v1/balance_transactions (spec part 2, decisions section 4). */
export interface BalanceTransaction {
  id: string;
  object: 'balance_transaction';
  type: TransactionType;
  amount_cents: number;
  fee_cents: number;
  net_cents: number;
  currency: string;
  status: TransactionStatus;
  created_at: string;
  source: TransactionSource;
  description: string;
}

/**
 * What a balance transaction came from, in the spec's shape `{ purchase_id, asset }` for every
 * line type (issue 44), so a client typed on the spec reads each one: a sale, refund, dispute or
 * dispute reversal names its purchase and asset; a line that no purchase made (a payout) has
 * both null, and a payout adds its `payout_id`.
 */
export interface TransactionSource {
  purchase_id: string | null;
  asset: { slug: string; title: string } | null;
  payout_id?: string;
}

/** The source of a line from its purchase, asset and payout (whichever it has). */
export function sourceOf(line: { purchase_id: string | null; asset: { slug: string; title: string } | null; payout_id: string | null }): TransactionSource {
  const source: TransactionSource = {
    purchase_id: line.purchase_id,
    asset: line.asset ? { slug: line.asset.slug, title: line.asset.title } : null,
  };
  if (line.payout_id) source.payout_id = line.payout_id;
  return source;
}

export interface LedgerSummary {
  currency: string;
  gross_cents: number;
  platform_fee_cents: number;
  earned_cents: number;
  refunded_cents: number;
  paid_out_cents: number;
  balance_cents: number;
  sale_count: number;
  refund_count: number;
}

export interface LedgerEntry {
  id: string;
  type: TransactionType;
  amount_cents: number;
  fee_cents: number;
  net_cents: number;
  currency: string;
  created_at: string;
  description: string;
  purchase_id: string | null;
  asset: AssetRef | null;
  payout: Payout | null;
}

export interface SaleRefunds {
  index: number;
  refundedCents: number;
  refundedFeeCents: number;
  /** Processor refund ids already recorded: a partial refund reported again records nothing. */
  refundIds: Set<string>;
  /** The whole amount went back. */
  refunded: boolean;
  /** The sale's dispute (one per payment): what it withheld, and its outcome once closed. */
  dispute: { id: string; amount_cents: number; fee_cents: number; withheld_cents: number; outcome: 'won' | 'lost' | null } | null;
}

export interface LedgerState {
  /** Every sale, refund and payout, oldest first. */
  entries: LedgerEntry[];
  /** Entries before the latest payout's line: those sales and refunds are `paid`. */
  settledCount: number;
  /** By purchase id: the index of its sale entry, how much of it was refunded, and by which processor refunds. */
  sales: Map<string, SaleRefunds>;
  /** Fixed by the first sale; one ledger holds one currency. */
  currency: string | null;
  paused: boolean;
  /** Why payouts are paused and since when (null while they run); `refused`: the processor refused the destination, which a new one lifts. */
  pause: PayoutPause | null;
  /** The payout whose transfer is under way, and how many entries it settles. */
  inFlight: (PayoutInitiated & { settles: number }) | null;
  /** Stripe connected account receiving transfers; null until set. */
  destination: string | null;
  /** The time of the ledger's latest event: a later event never states an earlier one (the journal's balances as of a moment rely on it). */
  lastAt: string;
  summary: Omit<LedgerSummary, 'currency'>;
}

/** Why a ledger's payouts are paused (GET /v1/payouts' `payouts_pause`, decisions "Paused payouts"). */
export interface PayoutPause {
  reason: string;
  since: string;
  /** The processor refused a transfer to the destination: a change of destination lifts the pause. */
  refused: boolean;
}

/** The reason an operator's pause shows (pauses recorded before they carried a reason were all operators'). */
export const OPERATOR_PAUSE_REASON = 'paused_by_operator';

/** The reason a refused transfer pauses payouts with. */
export const refusedReason = (failureCode: string) => `destination_refused: ${failureCode}`;

export function initialState(): LedgerState {
  return {
    entries: [],
    settledCount: 0,
    sales: new Map(),
    currency: null,
    paused: false,
    pause: null,
    inFlight: null,
    destination: null,
    lastAt: '',
    summary: emptySummary(),
  };
}

/** The summary of a ledger with nothing on it. */
export function emptySummary(): Omit<LedgerSummary, 'currency'> {
  return {
    gross_cents: 0,
    platform_fee_cents: 0,
    earned_cents: 0,
    refunded_cents: 0,
    paid_out_cents: 0,
    balance_cents: 0,
    sale_count: 0,
    refund_count: 0,
  };
}

/**
 * Folding owns the state: evolve extends the entries and sales of the state it is given
 * instead of copying them, because copying on every event would make loading a long
 * ledger quadratic. A state is never used again after it has been evolved.
 */
/** The ledger line of a sale or of its refund: both carry the same fields. */
function purchaseEntry(
  type: 'sale' | 'refund',
  e: Extract<LedgerEvent, { type: 'SaleRecorded' | 'RefundRecorded' }>['data'],
): LedgerState['entries'][number] {
  return {
    id: e.transaction_id,
    type,
    amount_cents: e.amount_cents,
    fee_cents: e.fee_cents,
    net_cents: e.net_cents,
    currency: e.currency,
    created_at: e.created_at,
    description: e.description,
    purchase_id: e.purchase_id,
    asset: e.asset,
    payout: null,
  };
}

/** The ledger line of a dispute (the net withheld) or of its reversal (the net released). */
function disputeEntry(type: 'dispute' | 'dispute_reversal', e: DisputeOpened | DisputeClosed): LedgerEntry {
  const net = type === 'dispute' ? negate(e.withheld_cents) : e.withheld_cents;
  return {
    id: e.transaction_id,
    type,
    amount_cents: net,
    fee_cents: 0,
    net_cents: net,
    currency: e.currency,
    created_at: e.created_at,
    description: e.description,
    purchase_id: e.purchase_id,
    asset: e.asset,
    payout: null,
  };
}

export function evolve(state: LedgerState, event: LedgerEvent): LedgerState {
  const next = evolveEntries(state, event);
  const at = timeOf(event);
  return at > next.lastAt ? { ...next, lastAt: at } : next;
}

/** When a ledger event says it happened. */
export function timeOf(event: LedgerEvent): string {
  switch (event.type) {
    case 'SaleRecorded':
    case 'RefundRecorded':
    case 'DisputeOpened':
    case 'DisputeClosed':
    case 'PayoutInitiated':
      return event.data.created_at;
    case 'PayoutPaid':
      return event.data.payout.arrival_date ?? event.data.payout.created_at;
    case 'PayoutFailed':
      return event.data.failed_at;
    case 'PayoutDestinationSet':
      return event.data.set_at;
    case 'PayoutsPaused':
      return event.data.paused_at;
    case 'PayoutsResumed':
      return event.data.resumed_at;
    case 'AdjustmentRecorded':
      return event.data.created_at;
  }
}

function evolveEntries(state: LedgerState, event: LedgerEvent): LedgerState {
  const s = state.summary;
  switch (event.type) {
    case 'SaleRecorded': {
      const e = event.data;
      state.sales.set(e.purchase_id, { index: state.entries.length, refundedCents: 0, refundedFeeCents: 0, refundIds: new Set(), refunded: false, dispute: null });
      state.entries.push(purchaseEntry('sale', e));
      const gross = s.gross_cents + e.amount_cents;
      const fee = s.platform_fee_cents + e.fee_cents;
      return {
        ...state,
        currency: state.currency ?? e.currency,
        summary: {
          ...s,
          gross_cents: gross,
          platform_fee_cents: fee,
          earned_cents: gross - fee,
          balance_cents: s.balance_cents + e.net_cents,
          sale_count: s.sale_count + 1,
        },
      };
    }
    case 'RefundRecorded': {
      const e = event.data;
      const sale = state.sales.get(e.purchase_id);
      if (sale) {
        sale.refundedCents -= e.amount_cents;
        sale.refundedFeeCents -= e.fee_cents;
        if (e.processor_refund_id) sale.refundIds.add(e.processor_refund_id);
        sale.refunded = sale.refundedCents >= state.entries[sale.index].amount_cents;
      }
      state.entries.push(purchaseEntry('refund', e));
      // A refund carries negated amounts: the refunded fee leaves the platform's take.
      const fee = s.platform_fee_cents + e.fee_cents;
      return {
        ...state,
        summary: {
          ...s,
          platform_fee_cents: fee,
          earned_cents: s.gross_cents - fee,
          refunded_cents: s.refunded_cents - e.amount_cents,
          balance_cents: s.balance_cents + e.net_cents,
          refund_count: s.refund_count + 1,
        },
      };
    }
    case 'DisputeOpened': {
      const e = event.data;
      const sale = state.sales.get(e.purchase_id);
      if (sale) sale.dispute = { id: e.dispute_id, amount_cents: e.amount_cents, fee_cents: e.fee_cents, withheld_cents: e.withheld_cents, outcome: null };
      state.entries.push(disputeEntry('dispute', e));
      return { ...state, summary: { ...s, balance_cents: s.balance_cents - e.withheld_cents } };
    }
    case 'DisputeClosed': {
      const e = event.data;
      const dispute = state.sales.get(e.purchase_id)?.dispute;
      if (dispute) dispute.outcome = e.outcome;
      // Lost: what the dispute line withheld is gone for good; no line of its own.
      if (e.outcome === 'lost') return state;
      state.entries.push(disputeEntry('dispute_reversal', e));
      return { ...state, summary: { ...s, balance_cents: s.balance_cents + e.withheld_cents } };
    }
    case 'PayoutInitiated':
      return { ...state, inFlight: { ...event.data, settles: state.entries.length } };
    case 'PayoutFailed':
      return { ...state, inFlight: null };
    case 'PayoutDestinationSet':
      return { ...state, destination: event.data.stripe_account };
    case 'PayoutPaid': {
      const e = event.data;
      // The payout line stands where it was decided: after what it settles, before the
      // sales and refunds recorded while its transfer was under way.
      const at = state.inFlight?.settles ?? state.entries.length;
      for (const sale of state.sales.values()) if (sale.index >= at) sale.index++;
      state.entries.splice(at, 0, {
        id: e.transaction_id,
        type: 'payout',
        amount_cents: -e.payout.amount_cents,
        fee_cents: 0,
        net_cents: -e.payout.amount_cents,
        currency: e.payout.currency,
        created_at: e.payout.created_at,
        description: e.description,
        purchase_id: null,
        asset: null,
        payout: e.payout,
      });
      return {
        ...state,
        settledCount: at,
        inFlight: null,
        summary: {
          ...s,
          paid_out_cents: s.paid_out_cents + e.payout.amount_cents,
          balance_cents: s.balance_cents - e.payout.amount_cents,
        },
      };
    }
    case 'PayoutsPaused': {
      const e = event.data;
      return { ...state, paused: true, pause: { reason: e.reason ?? OPERATOR_PAUSE_REASON, since: e.paused_at, refused: e.failure_code !== undefined } };
    }
    case 'PayoutsResumed':
      return { ...state, paused: false, pause: null };
    case 'AdjustmentRecorded': {
      const e = event.data;
      state.entries.push({ id: e.transaction_id, type: 'adjustment', amount_cents: e.net_cents, fee_cents: 0, net_cents: e.net_cents, currency: e.currency, created_at: e.created_at, description: e.description, purchase_id: null, asset: null, payout: null });
      return { ...state, currency: state.currency ?? e.currency, summary: { ...s, balance_cents: s.balance_cents + e.net_cents } };
    }
  }
}

export function fold(events: Iterable<LedgerEvent>): LedgerState {
  let state = initialState();
  for (const event of events) state = evolve(state, event);
  return state;
}

interface LedgerIdentity {
  account_id: string;
  mode: Mode;
  /** ISO timestamp of the decision. */
  now: string;
}

export type LedgerCommand =
  | (LedgerIdentity & {
      type: 'RecordSale';
      transaction_id: string;
      purchase_id: string;
      asset: AssetRef;
      amount_cents: number;
      currency: string;
      fee_bps: number;
      payment_reference?: string;
    })
  | (LedgerIdentity & {
      type: 'RecordRefund';
      transaction_id: string;
      purchase_id: string;
      processor_refund_id?: string;
      /** A partial refund's amount; absent: whatever of the sale is not refunded yet. */
      amount_cents?: number;
    })
  | (LedgerIdentity & {
      type: 'OpenDispute';
      transaction_id: string;
      purchase_id: string;
      dispute_id: string;
      /** What the processor withdrew: at most what is left of the sale after refunds. */
      amount_cents: number;
      dispute_fee_cents: number;
      reason: string;
    })
  | (LedgerIdentity & { type: 'CloseDispute'; transaction_id: string; purchase_id: string; dispute_id: string; outcome: 'won' | 'lost' })
  | (LedgerIdentity & {
      type: 'RunPayout';
      transaction_id: string;
      payout_id: string;
      /** The processor transfers only to a destination (Stripe); the sandbox needs none. */
      requires_destination: boolean;
    })
  | (LedgerIdentity & { type: 'SettlePayout'; payout_id: string; transfer_id: string })
  | (LedgerIdentity & { type: 'FailPayout'; payout_id: string; failure_code: string; reason: string })
  | (LedgerIdentity & { type: 'SetPayoutDestination'; stripe_account: string })
  | (LedgerIdentity & {
      type: 'RecordAdjustment';
      transaction_id: string;
      /** The creator's payable is debited (their balance goes down) or credited (up); `counter_account` the other side. */
      side: 'debit' | 'credit';
      counter_account: string;
      amount_cents: number;
      reason: string;
      actor: string | null;
    })
  | (LedgerIdentity & { type: 'PausePayouts' })
  | (LedgerIdentity & { type: 'ResumePayouts' });

/** Platform fee in cents: amount x bps / 10000, rounded half up, in integer arithmetic. */
export function platformFee(amountCents: number, feeBps: number): number {
  return Math.floor((amountCents * feeBps + 5000) / 10000);
}

/**
 * What a refund (or a dispute) takes back: `requested` cents (all that is left when absent)
 * and the platform fee cumulatively: the fee returned so far is the fee on the total
 * refunded so far, rounded half up, never more than the sale's fee; this part takes the
 * difference. So a sale refunded in parts gives back exactly its fee, and no part ever
 * takes more fee than its amount (no refund line nets positive, no journal posting is
 * negative). Rounding each part on its own did (issue 38, defect 3:
 * test/commerce/refunds.e2e.spec.ts "returns the fee cumulatively").
 */
function refundOf(entry: LedgerEntry, sale: SaleRefunds, requested: number | undefined): { amount: number; fee: number } {
  const left = entry.amount_cents - sale.refundedCents;
  const amount = requested ?? left;
  if (!Number.isSafeInteger(amount) || amount < 1 || amount > left) {
    throw Errors.validationFailed(`Invalid field "amount_cents": must be an integer between 1 and ${left}, what is left of the sale.`);
  }
  const due = feeOnRefunded(entry.fee_cents, entry.amount_cents, sale.refundedCents + amount) - sale.refundedFeeCents;
  // Parts recorded before the fee was cumulative may have taken more or less: never below 0, never above the amount.
  return { amount, fee: Math.min(amount, Math.max(0, due)) };
}

/** The sale's fee on `refunded` of its `amount`, half up, in BigInt: fee x refunded can pass 2^53. */
export function feeOnRefunded(fee: number, amount: number, refunded: number): number {
  if (refunded >= amount) return fee;
  const [f, a, r] = [BigInt(fee), BigInt(amount), BigInt(refunded)];
  return Number((2n * f * r + a) / (2n * a));
}

/** 0 - n, not -n: a zero fee must refund as 0, never as -0. */
const negate = (n: number) => 0 - n;

/** Largest sale amount: keeps amount x bps (at most 10000) an exact integer in a double. */
const MAX_AMOUNT_CENTS = 100_000_000_000;

function assertSale(command: Extract<LedgerCommand, { type: 'RecordSale' }>): void {
  const text = (value: unknown, max: number) => typeof value === 'string' && value.length >= 1 && value.length <= max;
  if (!text(command.purchase_id, 200)) throw Errors.validationFailed('Invalid field "purchase_id": must be 1-200 characters.');
  if (!command.asset || typeof command.asset !== 'object') throw Errors.validationFailed('Invalid field "asset": required.');
  for (const field of ['id', 'slug', 'title'] as const) {
    if (!text(command.asset[field], 500)) throw Errors.validationFailed(`Invalid field "asset.${field}": must be 1-500 characters.`);
  }
  if (!Number.isSafeInteger(command.amount_cents) || command.amount_cents < 1 || command.amount_cents > MAX_AMOUNT_CENTS) {
    throw Errors.validationFailed(`Invalid field "amount_cents": must be an integer between 1 and ${MAX_AMOUNT_CENTS}.`);
  }
  if (typeof command.currency !== 'string' || !/^[a-z]{3}$/.test(command.currency)) {
    throw Errors.validationFailed('Invalid field "currency": must be a lowercase ISO 4217 code such as "usd".');
  }
}

/** The events a command records; [] when it records nothing (a repeat or a skipped payout). */
export function decide(command: LedgerCommand, state: LedgerState): LedgerEvent[] {
  if (!isMode(command.mode)) throw Errors.validationFailed('Invalid field "mode": must be one of test, live.');
  const who = { account_id: command.account_id, mode: command.mode };
  // A command decided on another instance, whose clock ran ahead, may have recorded the latest event.
  const now = command.now > state.lastAt ? command.now : state.lastAt;
  switch (command.type) {
    case 'RecordSale': {
      assertSale(command);
      if (state.sales.has(command.purchase_id)) return [];
      if (state.currency && state.currency !== command.currency) {
        throw LedgerErrors.currencyMismatch(command.currency, state.currency);
      }
      const fee = platformFee(command.amount_cents, command.fee_bps);
      return [
        {
          type: 'SaleRecorded',
          data: {
            transaction_id: command.transaction_id,
            ...who,
            purchase_id: command.purchase_id,
            asset: { id: command.asset.id, slug: command.asset.slug, title: command.asset.title },
            amount_cents: command.amount_cents,
            fee_cents: fee,
            net_cents: command.amount_cents - fee,
            fee_bps: command.fee_bps,
            currency: command.currency,
            description: `Sale of "${command.asset.title}"`,
            created_at: now,
            ...(command.payment_reference ? { payment_reference: command.payment_reference } : {}),
          },
        },
      ];
    }
    case 'RecordRefund': {
      const sale = state.sales.get(command.purchase_id);
      if (!sale) throw LedgerErrors.saleNotFound(command.purchase_id);
      // The processor's report of a partial refund recorded already.
      if (command.processor_refund_id && sale.refundIds.has(command.processor_refund_id)) return [];
      if (sale.refunded) throw LedgerErrors.alreadyRefunded(command.purchase_id);
      if (sale.dispute && sale.dispute.outcome !== 'won') throw LedgerErrors.disputed(command.purchase_id);
      const entry = state.entries[sale.index];
      const { amount, fee } = refundOf(entry, sale, command.amount_cents);
      const partial = amount < entry.amount_cents;
      return [
        {
          type: 'RefundRecorded',
          data: {
            transaction_id: command.transaction_id,
            ...who,
            purchase_id: command.purchase_id,
            sale_transaction_id: entry.id,
            asset: entry.asset!,
            amount_cents: negate(amount),
            fee_cents: negate(fee),
            net_cents: negate(amount - fee),
            currency: entry.currency,
            description: `${partial ? 'Partial refund' : 'Refund'} of "${entry.asset!.title}"`,
            created_at: now,
            ...(command.processor_refund_id ? { processor_refund_id: command.processor_refund_id } : {}),
          },
        },
      ];
    }
    case 'OpenDispute': {
      const sale = state.sales.get(command.purchase_id);
      if (!sale) throw LedgerErrors.saleNotFound(command.purchase_id);
      // The processor's report of this dispute again (or fulfilment replayed after a crash).
      if (sale.dispute?.id === command.dispute_id) return [];
      if (sale.dispute || sale.refunded) throw LedgerErrors.notDisputable(command.purchase_id);
      const entry = state.entries[sale.index];
      const { amount, fee } = refundOf(entry, sale, command.amount_cents);
      return [
        {
          type: 'DisputeOpened',
          data: {
            transaction_id: command.transaction_id,
            ...who,
            purchase_id: command.purchase_id,
            sale_transaction_id: entry.id,
            dispute_id: command.dispute_id,
            asset: entry.asset!,
            amount_cents: amount,
            fee_cents: fee,
            withheld_cents: amount - fee,
            dispute_fee_cents: command.dispute_fee_cents,
            currency: entry.currency,
            reason: command.reason,
            description: `Dispute of "${entry.asset!.title}"`,
            created_at: now,
          },
        },
      ];
    }
    case 'CloseDispute': {
      const sale = state.sales.get(command.purchase_id);
      const dispute = sale?.dispute;
      if (!sale || dispute?.id !== command.dispute_id) throw LedgerErrors.disputeNotFound(command.dispute_id);
      if (dispute.outcome === command.outcome) return [];
      if (dispute.outcome) throw LedgerErrors.disputeClosed(command.dispute_id, dispute.outcome);
      const title = state.entries[sale.index].asset!.title;
      return [
        {
          type: 'DisputeClosed',
          data: {
            transaction_id: command.transaction_id,
            ...who,
            purchase_id: command.purchase_id,
            dispute_id: command.dispute_id,
            outcome: command.outcome,
            asset: state.entries[sale.index].asset!,
            amount_cents: dispute.amount_cents,
            fee_cents: dispute.fee_cents,
            withheld_cents: dispute.withheld_cents,
            currency: state.entries[sale.index].currency,
            description: `Dispute of "${title}" ${command.outcome}`,
            created_at: now,
          },
        },
      ];
    }
    case 'RunPayout': {
      const amount = state.summary.balance_cents;
      // One payout at a time: an unsettled one is resumed by the caller, not doubled.
      if (state.inFlight || state.paused || amount <= 0) return [];
      if (command.requires_destination && !state.destination) return [];
      return [
        {
          type: 'PayoutInitiated',
          data: {
            payout_id: command.payout_id,
            transaction_id: command.transaction_id,
            ...who,
            amount_cents: amount,
            currency: state.currency ?? DEFAULT_CURRENCY,
            created_at: now,
          },
        },
      ];
    }
    case 'SettlePayout': {
      const p = state.inFlight;
      if (p?.payout_id !== command.payout_id) return [];
      return [
        {
          type: 'PayoutPaid',
          data: {
            payout: {
              id: p.payout_id,
              object: 'payout',
              amount_cents: p.amount_cents,
              currency: p.currency,
              status: 'paid',
              created_at: p.created_at,
              arrival_date: now,
              failure_code: null,
              failure_message: null,
            },
            ...who,
            transaction_id: p.transaction_id,
            description: 'Payout',
            transfer_id: command.transfer_id,
          },
        },
      ];
    }
    case 'FailPayout': {
      if (state.inFlight?.payout_id !== command.payout_id) return [];
      // The processor refused the destination: payouts pause with the refusal, in the same
      // append, so no later run sends another transfer there (issue 38, defect 1) until the
      // destination changes (SetPayoutDestination) or an operator resumes them.
      const pause: LedgerEvent[] = state.paused
        ? []
        : [
            {
              type: 'PayoutsPaused',
              data: {
                ...who,
                paused_at: now,
                reason: refusedReason(command.failure_code),
                failure_code: command.failure_code,
                destination: state.destination,
                payout_id: command.payout_id,
              },
            },
          ];
      return [
        {
          type: 'PayoutFailed',
          data: {
            payout_id: command.payout_id,
            ...who,
            reason: command.reason,
            failed_at: now,
            payout: {
              id: command.payout_id,
              object: 'payout',
              amount_cents: state.inFlight.amount_cents,
              currency: state.inFlight.currency,
              status: 'failed',
              created_at: state.inFlight.created_at,
              arrival_date: null,
              failure_code: command.failure_code,
              failure_message: command.reason,
            },
          },
        },
        ...pause,
      ];
    }
    case 'SetPayoutDestination': {
      const events: LedgerEvent[] = [];
      if (state.destination !== command.stripe_account) events.push({ type: 'PayoutDestinationSet', data: { ...who, stripe_account: command.stripe_account, set_at: now } });
      // Setting the destination again (a new one, or the same once the creator fixed it at the
      // processor) lifts a pause the processor's refusal made; an operator's pause stays.
      if (state.pause?.refused) events.push({ type: 'PayoutsResumed', data: { ...who, resumed_at: now, reason: 'destination_changed' } });
      return events;
    }
    case 'PausePayouts':
      return state.paused ? [] : [{ type: 'PayoutsPaused', data: { ...who, paused_at: now, reason: OPERATOR_PAUSE_REASON } }];
    case 'ResumePayouts':
      return state.paused ? [{ type: 'PayoutsResumed', data: { ...who, resumed_at: now, reason: 'resumed_by_operator' } }] : [];
    case 'RecordAdjustment': {
      // The accounts, amount and reason are checked by the caller (src/ledger/adjusting-entries.ts), before any stream is read.
      // An entry booked already (a retry under the same Idempotency-Key, whose id it derives from the key) books nothing.
      if (state.entries.some((e) => e.id === command.transaction_id)) return [];
      const payable = `creator:${command.account_id}:payable`;
      const net = command.side === 'credit' ? command.amount_cents : negate(command.amount_cents);
      return [
        {
          type: 'AdjustmentRecorded',
          data: {
            transaction_id: command.transaction_id,
            ...who,
            debit_account: command.side === 'debit' ? payable : command.counter_account,
            credit_account: command.side === 'credit' ? payable : command.counter_account,
            amount_cents: command.amount_cents,
            net_cents: net,
            currency: state.currency ?? DEFAULT_CURRENCY,
            reason: command.reason,
            description: `Adjustment: ${command.reason}`,
            actor: command.actor,
            created_at: now,
          },
        },
      ];
    }
  }
}

export function statusOf(state: LedgerState, index: number): TransactionStatus {
  return state.entries[index].type === 'payout' || index < state.settledCount ? 'paid' : 'pending';
}

export function toBalanceTransaction(entry: LedgerEntry, status: TransactionStatus): BalanceTransaction {
  return {
    id: entry.id,
    object: 'balance_transaction',
    type: entry.type,
    amount_cents: entry.amount_cents,
    fee_cents: entry.fee_cents,
    net_cents: entry.net_cents,
    currency: entry.currency,
    status,
    created_at: entry.created_at,
    source: sourceOf({ purchase_id: entry.purchase_id, asset: entry.asset, payout_id: entry.payout?.id ?? null }),
    description: entry.description,
  };
}

/** Every balance transaction of a ledger, oldest first, as the API shows them. */
export function transactionsOf(state: LedgerState): BalanceTransaction[] {
  return state.entries.map((entry, i) => toBalanceTransaction(entry, statusOf(state, i)));
}

export function summaryOf(state: LedgerState): LedgerSummary {
  return { currency: state.currency ?? DEFAULT_CURRENCY, ...state.summary };
}
