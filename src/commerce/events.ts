import type { AssetRef } from '../ledger/events';
import type { Mode } from '../platform/mode';

/**
 * Facts of one checkout session, all on its stream `checkout-<mode>-<session_id>`. The
 * stream is the fulfilment boundary: the completion is appended at the revision the
 * session was loaded at, so a session paid twice, or one webhook delivered twice or
 * concurrently, completes once.
 */
export type CheckoutPurpose = 'purchase' | 'key_activation';

export interface CheckoutSessionOpened {
  session_id: string;
  mode: Mode;
  purpose: CheckoutPurpose;
  /** Who pays: the buyer, or the owner of the key being activated. */
  buyer_account_id: string;
  amount_cents: number;
  currency: string;
  /** purpose purchase: what is bought, from whom, and the purchase id fulfilment will record. */
  asset: AssetRef | null;
  seller_account_id: string | null;
  purchase_id: string | null;
  /** purpose key_activation: the live premium key that the payment activates. */
  key_id: string | null;
  success_url: string | null;
  cancel_url: string | null;
  /**
   * Recorded before the processor is asked for its payment page, so a payment can never
   * arrive for a session we do not know. The page URL is the processor's answer, returned
   * to the caller and not stored.
   */
  processor: 'sandbox' | 'stripe';
  expires_at: string;
  created_at: string;
}

/** The purchase object of decisions section 3, as GET /v1/purchases shows it. */
export interface Purchase {
  id: string;
  object: 'purchase';
  asset: AssetRef;
  amount_cents: number;
  currency: string;
  /** disputed: the buyer's bank took the payment back and the dispute was lost; the download is revoked. */
  status: 'paid' | 'refunded' | 'disputed';
  checkout_session_id: string;
  created_at: string;
  /** What went back to the buyer so far (issue 38); absent in purchases recorded before it was shown. */
  amount_refunded_cents?: number;
}

/** A paid purchase: the buyer is entitled; the fulfilment subscriber records the sale. Source of listing.purchased. */
export interface PurchaseCompleted {
  session_id: string;
  purchase_id: string;
  mode: Mode;
  buyer_account_id: string;
  seller_account_id: string;
  purchase: Purchase;
  /** The listing's public object when it was bought (webhook payload). */
  listing: Record<string, unknown>;
  /** The processor's payment (Stripe PaymentIntent id, or the sandbox's own reference). */
  payment_reference: string;
  completed_at: string;
}

/** The money went back to the buyer: the entitlement ends; the subscriber records the ledger debit. */
export interface PurchaseRefunded {
  session_id: string;
  purchase_id: string;
  mode: Mode;
  buyer_account_id: string;
  seller_account_id: string;
  /** The purchase as it stands refunded (source of purchase.refunded); absent on refunds recorded before that webhook. */
  purchase?: Purchase;
  processor_refund_id: string;
  refunded_at: string;
}

/**
 * Part of a purchase's payment went back to the buyer (Stripe's charge.refunded with less than
 * the whole charge refunded): the purchase stays paid and entitled; the subscriber records
 * the ledger's partial debit. A later full refund (PurchaseRefunded) takes back the rest.
 */
export interface PurchasePartiallyRefunded {
  session_id: string;
  purchase_id: string;
  mode: Mode;
  buyer_account_id: string;
  seller_account_id: string;
  processor_refund_id: string;
  /** This refund's part, and all refunded of the payment with it. */
  amount_cents: number;
  refunded_total_cents: number;
  currency: string;
  refunded_at: string;
}

/**
 * The buyer's bank disputes the purchase's payment (Stripe's charge.dispute.created, the
 * sandbox's card 4000000000000259): the processor withdrew the disputed amount and its
 * dispute fee. The purchase stays paid while the dispute is open; the subscriber withholds
 * the sale's net on the seller's ledger.
 */
export interface PurchaseDisputed {
  session_id: string;
  purchase_id: string;
  mode: Mode;
  buyer_account_id: string;
  seller_account_id: string;
  /** The processor's dispute (Stripe dp_..., sandbox sbx_dp_...). */
  dispute_id: string;
  /** What the processor withdrew for it, and its fee for handling it (the platform's cost). */
  amount_cents: number;
  dispute_fee_cents: number;
  currency: string;
  /** The bank's reason, as the processor names it (fraudulent, product_not_received, ...). */
  reason: string;
  disputed_at: string;
}

/**
 * The dispute is settled. won: the processor returned the disputed amount (not its fee) and
 * the seller's net is released; lost: the money stays with the buyer, the purchase becomes
 * `disputed` and the buyer's entitlement ends.
 */
export interface PurchaseDisputeClosed {
  session_id: string;
  purchase_id: string;
  mode: Mode;
  buyer_account_id: string;
  seller_account_id: string;
  dispute_id: string;
  outcome: DisputeOutcome;
  /** The purchase as it stands after the dispute. */
  purchase: Purchase;
  closed_at: string;
}

export type DisputeOutcome = 'won' | 'lost';

/** The activation fee of a live premium key is paid; the subscriber activates the key. */
export interface KeyActivationPaid {
  session_id: string;
  mode: Mode;
  account_id: string;
  key_id: string;
  amount_cents: number;
  currency: string;
  payment_reference: string;
  paid_at: string;
}

/**
 * A purchase session was paid for an asset the buyer already holds (through another
 * session): no purchase, no sale, no webhook; the payment goes back (DuplicatePaymentRefunded).
 */
export interface DuplicatePaymentReceived {
  session_id: string;
  mode: Mode;
  buyer_account_id: string;
  seller_account_id: string;
  asset: AssetRef;
  amount_cents: number;
  currency: string;
  payment_reference: string;
  /** The purchase that holds the asset. */
  owned_by_purchase_id: string;
  received_at: string;
}

/** The processor took back a duplicate payment; `settled` false: it confirms later (Stripe's charge.refunded). */
export interface DuplicatePaymentRefunded {
  session_id: string;
  mode: Mode;
  buyer_account_id: string;
  /** What went back; absent on refunds recorded before the journal (it reads them from the payment). */
  amount_cents?: number;
  currency?: string;
  payment_reference: string;
  processor_refund_id: string;
  settled: boolean;
  refunded_at: string;
}

/**
 * What the processor charged us for taking the session's payment (Stripe: the charge's
 * balance transaction fee; the sandbox: SANDBOX_PROCESSOR_FEE_BPS + SANDBOX_PROCESSOR_FEE_FIXED_CENTS). The
 * platform's cost, never the creator's.
 */
export interface ProcessorFeeCharged {
  session_id: string;
  mode: Mode;
  payment_reference: string;
  fee_cents: number;
  currency: string;
  /** The processor's record of the fee (Stripe: txn_...), null where it has none. */
  processor_fee_id: string | null;
  charged_at: string;
}

/**
 * An operator adopted a movement the processor has and the books did not (issue 38, defect 5:
 * a refund orphaned by a crash, a fee never booked): `svc ledger adopt`. Appended with the
 * event that books it (PurchasePartiallyRefunded / PurchaseRefunded, ProcessorFeeCharged) in
 * one append on the session's stream, so the movement is booked once, by the usual path,
 * and who adopted it and why stay beside it. Posts nothing itself.
 */
export interface ProcessorMovementAdopted {
  session_id: string;
  mode: Mode;
  /** The purchase whose payment it moved; null for a session that made none (a key activation's fee). */
  purchase_id: string | null;
  kind: 'refund' | 'fee';
  /** The processor's id of the movement (its refund re_..., its fee), as `svc ledger reconcile` lists it. */
  processor_id: string;
  payment_reference: string;
  amount_cents: number;
  currency: string;
  /** Who adopted it: the operator (today `admin`, the one ADMIN_TOKEN). */
  actor: string;
  reason: string;
  /** The event that books it. */
  booked_as: string;
  adopted_at: string;
}

export type CheckoutEvent =
  | { type: 'CheckoutSessionOpened'; data: CheckoutSessionOpened }
  | { type: 'PurchaseCompleted'; data: PurchaseCompleted }
  | { type: 'PurchaseRefunded'; data: PurchaseRefunded }
  | { type: 'PurchasePartiallyRefunded'; data: PurchasePartiallyRefunded }
  | { type: 'KeyActivationPaid'; data: KeyActivationPaid }
  | { type: 'DuplicatePaymentReceived'; data: DuplicatePaymentReceived }
  | { type: 'DuplicatePaymentRefunded'; data: DuplicatePaymentRefunded }
  | { type: 'ProcessorFeeCharged'; data: ProcessorFeeCharged }
  | { type: 'PurchaseDisputed'; data: PurchaseDisputed }
  | { type: 'PurchaseDisputeClosed'; data: PurchaseDisputeClosed }
  | { type: 'ProcessorMovementAdopted'; data: ProcessorMovementAdopted };
