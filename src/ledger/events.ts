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
}

export interface Payout {
  id: string;
  object: 'payout';
  amount_cents: number;
  currency: string;
  status: 'paid';
  created_at: string;
  arrival_date: string;
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
  /** The payout's amount and currency; absent on failures recorded before the journal (it reads them from the initiation). */
  amount_cents?: number;
  currency?: string;
  /** A stable code for why (Stripe's payout failure codes where the processor gives one). */
  failure_code?: string;
  reason: string;
  failed_at: string;
}

/** Where Stripe transfers this ledger's payouts: the creator's connected account. */
export interface PayoutDestinationSet {
  account_id: string;
  mode: Mode;
  stripe_account: string;
  set_at: string;
}

export interface PayoutsPaused {
  account_id: string;
  mode: Mode;
  paused_at: string;
}

export interface PayoutsResumed {
  account_id: string;
  mode: Mode;
  resumed_at: string;
}

export type LedgerEvent =
  | { type: 'SaleRecorded'; data: SaleRecorded }
  | { type: 'RefundRecorded'; data: RefundRecorded }
  | { type: 'PayoutInitiated'; data: PayoutInitiated }
  | { type: 'PayoutPaid'; data: PayoutPaid }
  | { type: 'PayoutFailed'; data: PayoutFailed }
  | { type: 'PayoutDestinationSet'; data: PayoutDestinationSet }
  | { type: 'PayoutsPaused'; data: PayoutsPaused }
  | { type: 'PayoutsResumed'; data: PayoutsResumed };

export const LEDGER_EVENT_TYPES: readonly LedgerEvent['type'][] = [
  'SaleRecorded',
  'RefundRecorded',
  'PayoutInitiated',
  'PayoutPaid',
  'PayoutFailed',
  'PayoutDestinationSet',
  'PayoutsPaused',
  'PayoutsResumed',
];
