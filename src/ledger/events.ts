import type { Mode } from '../platform/mode';

/**
 * Facts of a creator's ledger stream (`ledger-<mode>-<account>`). Every amount an entry
 * shows is stored in its event, so replaying never depends on today's settings.
 */
export interface AssetRef {
  id: string;
  slug: string;
  title: string;
}

export interface SaleRecorded {
  transaction_id: string;
  account_id: string;
  mode: Mode;
  purchase_id: string;
  asset: AssetRef;
  amount_cents: number;
  fee_cents: number;
  net_cents: number;
  /** PLATFORM_FEE_BPS when the sale was recorded. */
  fee_bps: number;
  currency: string;
  description: string;
  created_at: string;
  /** The processor's payment (Stripe pi_..., sandbox sbx_pay_...); absent on sales recorded before the journal. */
  payment_reference?: string;
}

/** The matching debit of one sale: its amount, fee and net negated. */
export interface RefundRecorded {
  transaction_id: string;
  account_id: string;
  mode: Mode;
  purchase_id: string;
  sale_transaction_id: string;
  asset: AssetRef;
  amount_cents: number;
  fee_cents: number;
  net_cents: number;
  currency: string;
  description: string;
  created_at: string;
  /** The processor's refund (Stripe re_...); absent on refunds recorded before the journal or without one. */
  processor_refund_id?: string;
}

/**
 * The buyer's bank disputes a sale's payment: the sale's net (of what is disputed) is withheld
 * from the creator's balance (a `dispute` balance transaction) until the dispute closes. The
 * processor withdrew `amount_cents` and charged `dispute_fee_cents` for it, the platform's
 * cost; `fee_cents` is the platform fee at stake, lost with the dispute.
 */
export interface DisputeOpened {
  transaction_id: string;
  account_id: string;
  mode: Mode;
  purchase_id: string;
  sale_transaction_id: string;
  dispute_id: string;
  asset: AssetRef;
  /** Disputed: fee_cents + withheld_cents. */
  amount_cents: number;
  fee_cents: number;
  withheld_cents: number;
  dispute_fee_cents: number;
  currency: string;
  reason: string;
  description: string;
  created_at: string;
}

/**
 * The dispute closed. won: the withheld net returns to the balance (a `dispute_reversal`
 * balance transaction) and the processor returns the disputed amount; lost: the withheld net
 * went to the buyer and the platform loses its fee on the sale (no balance transaction: the
 * `dispute` one already took it from the balance).
 */
export interface DisputeClosed {
  /** The dispute_reversal's id when won; the closing's own id when lost. */
  transaction_id: string;
  account_id: string;
  mode: Mode;
  purchase_id: string;
  dispute_id: string;
  outcome: 'won' | 'lost';
  asset: AssetRef;
  amount_cents: number;
  fee_cents: number;
  withheld_cents: number;
  currency: string;
  description: string;
  created_at: string;
}

/** A payout as GET /v1/payouts and the payout.* webhooks show it (Stripe's payout object, in cents). */
export interface Payout {
  id: string;
  object: 'payout';
  amount_cents: number;
  currency: string;
  status: 'in_transit' | 'paid' | 'failed';
  created_at: string;
  /** When it settled; null until it is paid. */
  arrival_date: string | null;
  /** Why the processor refused it (its code, e.g. Stripe's); null unless failed. Absent on payouts recorded before failures were shown. */
  failure_code?: string | null;
  failure_message?: string | null;
}

/**
 * A payout of the whole balance is decided and its transfer is about to be sent. While it
 * is in flight no other payout starts; the balance moves only when it settles.
 */
export interface PayoutInitiated {
  payout_id: string;
  transaction_id: string;
  account_id: string;
  mode: Mode;
  amount_cents: number;
  currency: string;
  created_at: string;
}

/**
 * The in-flight payout's transfer settled; every sale and refund recorded before its
 * PayoutInitiated becomes `paid`. (A PayoutPaid without an initiation before it, from
 * before payouts had two steps, settles everything before itself.)
 */
export interface PayoutPaid {
  payout: Payout;
  account_id: string;
  mode: Mode;
  transaction_id: string;
  description: string;
  /** The processor's transfer (Stripe tr_...); absent on payouts recorded before transfers. */
  transfer_id?: string;
}

/** The processor refused the in-flight payout's transfer: nothing moved, the amount returns to the balance. */
export interface PayoutFailed {
  payout_id: string;
  account_id: string;
  mode: Mode;
  reason: string;
  failed_at: string;
  /**
   * The payout as it failed (status failed, failure_code, failure_message): source of the
   * payout.failed webhook. Absent on failures recorded before it was; the journal then reads
   * the amount from the payout's initiation.
   */
  payout?: Payout;
}

/** Where Stripe transfers this ledger's payouts: the creator's connected account. */
export interface PayoutDestinationSet {
  account_id: string;
  mode: Mode;
  stripe_account: string;
  set_at: string;
}

/**
 * Payouts of this ledger stop until resumed: by an operator (svc payouts pause; no reason on
 * pauses recorded before they carried one), or by the processor refusing a transfer to the
 * destination (issue 38, defect 1), recorded with the refused payout: `reason`
 * `destination_refused: <failure_code>`, lifted by the next change of destination.
 */
export interface PayoutsPaused {
  account_id: string;
  mode: Mode;
  paused_at: string;
  /** Why, as the creator sees it: `destination_refused: resource_missing`, `paused_by_operator`. Absent on older pauses (an operator's). */
  reason?: string;
  /** Set when the processor's refusal paused them: its code, and the destination it refused. */
  failure_code?: string;
  destination?: string | null;
  /** The refused payout that paused them. */
  payout_id?: string;
}

export interface PayoutsResumed {
  account_id: string;
  mode: Mode;
  resumed_at: string;
  /** `destination_changed` (a new destination lifted a refusal's pause) or `resumed_by_operator`; absent on older resumes. */
  reason?: string;
}

/**
 * An adjusting entry on a creator's payable (`svc ledger adjust`): a write-off, a correction,
 * a goodwill credit. One debit and one credit of `amount_cents`; the creator's side is
 * `creator:<account_id>:payable`, the other a platform account. `net_cents` is what it does to
 * the creator's balance (+ when their payable is credited), shown as an `adjustment` line.
 */
export interface AdjustmentRecorded {
  transaction_id: string;
  account_id: string;
  mode: Mode;
  debit_account: string;
  credit_account: string;
  amount_cents: number;
  net_cents: number;
  currency: string;
  reason: string;
  description: string;
  actor: string | null;
  created_at: string;
}

/** An adjusting entry between two platform accounts (stream `manualentry-<mode>-<entry_id>`, appended with no_stream). */
export interface ManualEntryRecorded {
  entry_id: string;
  mode: Mode;
  debit_account: string;
  credit_account: string;
  amount_cents: number;
  currency: string;
  reason: string;
  actor: string | null;
  created_at: string;
}

export type LedgerEvent =
  | { type: 'SaleRecorded'; data: SaleRecorded }
  | { type: 'RefundRecorded'; data: RefundRecorded }
  | { type: 'DisputeOpened'; data: DisputeOpened }
  | { type: 'DisputeClosed'; data: DisputeClosed }
  | { type: 'PayoutInitiated'; data: PayoutInitiated }
  | { type: 'PayoutPaid'; data: PayoutPaid }
  | { type: 'PayoutFailed'; data: PayoutFailed }
  | { type: 'PayoutDestinationSet'; data: PayoutDestinationSet }
  | { type: 'PayoutsPaused'; data: PayoutsPaused }
  | { type: 'PayoutsResumed'; data: PayoutsResumed }
  | { type: 'AdjustmentRecorded'; data: AdjustmentRecorded };

export const LEDGER_EVENT_TYPES: readonly LedgerEvent['type'][] = [
  'SaleRecorded',
  'RefundRecorded',
  'DisputeOpened',
  'DisputeClosed',
  'PayoutInitiated',
  'PayoutPaid',
  'PayoutFailed',
  'PayoutDestinationSet',
  'PayoutsPaused',
  'PayoutsResumed',
  'AdjustmentRecorded',
];
