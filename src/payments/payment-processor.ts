import { ApiError } from '../platform/errors';
import type { Mode } from '../platform/mode';

/**
 * The PaymentProcessor port (architecture rule 9). Adapters: the sandbox (embedded default,
 * its hosted checkout page is served by this service) and Stripe. Neither records
 * anything: a confirmed payment reaches the one fulfilment path (CompleteCheckoutCommand)
 * from the sandbox page or from the processor's webhook.
 */
export interface CheckoutRequest {
  mode: Mode;
  /** Our checkout session id; the processor keeps it so its webhook can name the session. */
  sessionId: string;
  amountCents: number;
  currency: string;
  /** What the buyer sees on the payment page. */
  description: string;
  successUrl: string | null;
  cancelUrl: string | null;
  expiresAt: Date;
}

export interface OpenedCheckout {
  checkoutUrl: string;
  /** The processor's own id of the session (the sandbox reuses ours). */
  processorSessionId: string;
}

export interface RefundRequest {
  mode: Mode;
  /** What the fulfilment recorded as the payment (Stripe: the PaymentIntent id). */
  paymentReference: string;
  /** The same key for a retried refund, so the processor refunds once. */
  idempotencyKey: string;
  /** Part of the payment; absent: all of it that is not refunded yet. */
  amountCents?: number;
}

export interface ProcessorRefund {
  refundId: string;
  /** True when the money went back already; false when the processor confirms later (its webhook). */
  settled: boolean;
  /** What this refund returns, in cents. */
  amountCents: number;
}

export interface TransferRequest {
  mode: Mode;
  /** Our payout id; also the idempotency key, so a retried transfer moves the money once. */
  payoutId: string;
  amountCents: number;
  currency: string;
  /** The creator's connected account (Stripe); null where none is needed. */
  destination: string | null;
}

export interface FeeRequest {
  mode: Mode;
  paymentReference: string;
  amountCents: number;
  currency: string;
}

/** What the processor kept of a payment as its fee. */
export interface ProcessorFee {
  feeCents: number;
  /** The processor's own record of it (Stripe's balance transaction txn_...), null where it has none. */
  processorFeeId: string | null;
}

export interface ProcessorRecordsRequest {
  mode: Mode;
  /** Records made in [from, to); either end open when absent. */
  from?: Date;
  to?: Date;
}

/**
 * One entry of the processor's own books, as reconciliation compares them with ours: a charge
 * (a payment taken), the fee it kept on one, a refund, a transfer (a payout), a dispute (the
 * disputed amount and the dispute fee withdrawn) or a dispute's reversal (the amount returned
 * when it was won). Amounts are positive; the kind says which way the money went.
 */
export interface ProcessorRecord {
  kind: 'charge' | 'fee' | 'refund' | 'transfer' | 'dispute' | 'dispute_reversal';
  /** The id our events name it by: the payment (Stripe pi_...), the fee (txn_...), the refund, the transfer or the dispute (dp_...). */
  id: string;
  amount_cents: number;
  currency: string;
  created_at: string;
  /** A refund's or a fee's payment (the id a charge record has), so a movement the books miss can be booked on it (svc ledger adopt); absent where unknown. */
  payment_id?: string;
}

/** A dispute the processor opened on a payment: what it withdrew and what it charged for it. */
export interface ProcessorDispute {
  disputeId: string;
  amountCents: number;
  feeCents: number;
  reason: string;
}

export type DisputeOutcome = 'won' | 'lost';

export interface PaymentProcessor {
  readonly name: 'sandbox' | 'stripe';
  /** Whether a payout needs a destination set first (svc payouts destination). */
  readonly requiresPayoutDestination: boolean;
  openCheckout(request: CheckoutRequest): Promise<OpenedCheckout>;
  refund(request: RefundRequest): Promise<ProcessorRefund>;
  /** The fee the processor charged for a payment; undefined while it does not say yet (Stripe settles it a moment later). */
  feeOf(request: FeeRequest): Promise<ProcessorFee | undefined>;
  /**
   * Sends a payout. Resolves once the money moved. Rejects with TransferRefusedError when
   * the processor refused it (nothing moved); any other rejection leaves the outcome
   * unknown, and the payout stays in flight to be retried with the same payout id.
   */
  transfer(request: TransferRequest): Promise<{ transferId: string }>;
  /**
   * An operator settles a dispute (svc disputes close). Resolves with the outcome the processor
   * recorded: the first close of a dispute is final, a later one answers it. Stripe settles its
   * disputes itself and refuses; its charge.dispute.closed webhook reports the outcome.
   */
  closeDispute(request: { mode: Mode; disputeId: string; outcome: DisputeOutcome }): Promise<DisputeOutcome>;
  /** The processor's own books in a period, for reconciliation. */
  records(request: ProcessorRecordsRequest): Promise<ProcessorRecord[]>;
}

/** The processor answered and refused a transfer: no money moved. */
export class TransferRefusedError extends ApiError {
  /** failureCode: the processor's reason (Stripe's error code), recorded on the failed payout. */
  constructor(message: string, readonly failureCode = 'transfer_refused') {
    super(400, 'transfer_failed', message);
  }
}

export const PAYMENT_PROCESSOR = Symbol('PaymentProcessor');
