/**
 * A checkout session as a pure decider: no I/O, no clock (commands carry `now`). Both
 * processors' confirmations end in `decide(Complete)`, which records the completion once.
 */
import type { Decider } from '../event-store/stream-commands';
import { ApiError, Errors } from '../platform/errors';
import { randomBase62 } from '../platform/ids';
import { isMode, Mode } from '../platform/mode';
import type {
  CheckoutEvent,
  CheckoutSessionOpened,
  DuplicatePaymentReceived,
  DuplicatePaymentRefunded,
  KeyActivationPaid,
  Purchase,
  PurchaseCompleted,
  ProcessorFeeCharged,
  PurchaseDisputeClosed,
  PurchaseDisputed,
  PurchaseRefunded,
  DisputeOutcome,
} from './events';

export interface CheckoutState {
  opened: CheckoutSessionOpened;
  /** The session's payment, once confirmed: a purchase, a key activation, or a duplicate of a purchase the buyer holds. */
  completed: PurchaseCompleted | KeyActivationPaid | DuplicatePaymentReceived | null;
  refunded: PurchaseRefunded | null;
  /** How much of the payment went back in parts so far. */
  partiallyRefundedCents: number;
  /** The processor refunds recorded as parts: a part reported again records nothing. */
  partialRefundIds: string[];
  /** The duplicate payment went back to the buyer. */
  duplicateRefunded: DuplicatePaymentRefunded | null;
  /** What the processor charged for the payment, once known. */
  processorFee: ProcessorFeeCharged | null;
  /** The payment's dispute (a processor allows one per payment), and how it closed. */
  dispute: { opened: PurchaseDisputed; closed: PurchaseDisputeClosed | null } | null;
}

/** decisions section 3: requires_payment -> complete | expired. */
export type CheckoutStatus = 'requires_payment' | 'complete' | 'expired';

/** Session ids carry their mode, as Stripe's do (cs_test_..., cs_live_...): a hosted page URL names one stream. */
export function checkoutSessionId(mode: Mode): string {
  return `cs_${mode}_${randomBase62(24)}`;
}

export function modeOfSessionId(sessionId: string): Mode | undefined {
  const mode = /^cs_(test|live)_[A-Za-z0-9]{24}$/.exec(sessionId)?.[1];
  return isMode(mode) ? mode : undefined;
}

/** Sessions expire 30 minutes after they open (decisions section 3). */
export const CHECKOUT_TTL_MS = 30 * 60 * 1000;

export function evolve(state: CheckoutState | undefined, event: CheckoutEvent): CheckoutState | undefined {
  switch (event.type) {
    case 'CheckoutSessionOpened':
      return { opened: event.data, completed: null, refunded: null, partiallyRefundedCents: 0, partialRefundIds: [], duplicateRefunded: null, processorFee: null, dispute: null };
    case 'PurchaseCompleted':
    case 'KeyActivationPaid':
    case 'DuplicatePaymentReceived':
      return state && { ...state, completed: event.data };
    case 'PurchaseRefunded':
      return state && { ...state, refunded: event.data };
    case 'PurchasePartiallyRefunded':
      return state && { ...state, partiallyRefundedCents: event.data.refunded_total_cents, partialRefundIds: [...state.partialRefundIds, event.data.processor_refund_id] };
    case 'DuplicatePaymentRefunded':
      return state && { ...state, duplicateRefunded: event.data };
    case 'ProcessorFeeCharged':
      return state && { ...state, processorFee: event.data };
    case 'PurchaseDisputed':
      return state && { ...state, dispute: { opened: event.data, closed: null } };
    case 'PurchaseDisputeClosed':
      return state?.dispute ? { ...state, dispute: { ...state.dispute, closed: event.data } } : state;
    case 'ProcessorMovementAdopted':
      // Who and why only: the event appended with it books the money.
      return state;
  }
}

/** A session's decider; a stream with no session (no CheckoutSessionOpened) is not found. */
export const checkoutDecider: Decider<CheckoutCommand, CheckoutEvent, CheckoutState | undefined> = {
  initialState: () => undefined,
  evolve,
  decide: (command, state) => {
    if (!state) throw Errors.notFound('checkout session');
    return decide(command, state);
  },
};

export function fold(events: readonly CheckoutEvent[]): CheckoutState | undefined {
  return events.reduce<CheckoutState | undefined>(evolve, undefined);
}

export function statusOf(state: CheckoutState, now: Date): CheckoutStatus {
  if (state.completed) return 'complete';
  return now.getTime() >= Date.parse(state.opened.expires_at) ? 'expired' : 'requires_payment';
}

export type CheckoutCommand =
  | {
      type: 'Complete';
      now: string;
      payment_reference: string;
      /** The listing's public object now, for the listing.purchased payload (purchases only). */
      listing: Record<string, unknown> | null;
      /**
       * The sandbox page refuses an expired session; a processor's confirmation is
       * honoured whenever it arrives, because the buyer's money has moved.
       */
      refuseExpired: boolean;
      /** Another purchase that holds the asset (the entitlement stream's say): this payment is a duplicate. */
      ownedBy: string | null;
    }
  | { type: 'RecordRefund'; now: string; processor_refund_id: string }
  /**
   * A part refunded: by the processor's running total (its charge.refunded report), or by this
   * refund's own amount (an operator's refund, whose total others racing it may change).
   */
  | ({ type: 'RecordPartialRefund'; now: string; processor_refund_id: string } & ({ refunded_total_cents: number } | { amount_cents: number }))
  | { type: 'RecordDuplicateRefund'; now: string; processor_refund_id: string; settled: boolean }
  | { type: 'RecordProcessorFee'; now: string; fee_cents: number; processor_fee_id: string | null }
  /** The processor's dispute of the payment: what it withdrew and its fee for the dispute. */
  | { type: 'RecordDispute'; now: string; dispute_id: string; amount_cents: number; dispute_fee_cents: number; reason: string }
  | { type: 'CloseDispute'; now: string; dispute_id: string; outcome: DisputeOutcome }
  /** `svc ledger adopt`: a refund or fee of this session's payment the processor has and the books do not (issue 38, defect 5). */
  | { type: 'AdoptMovement'; now: string; kind: 'refund' | 'fee'; processor_id: string; amount_cents: number; actor: string; reason: string };

export const CheckoutErrors = {
  expired: () => new ApiError(400, 'checkout_expired', 'This checkout session has expired; open a new one with POST /v1/purchases.'),
  notPaid: (purchaseId: string) => Errors.invalidRequest(`Purchase "${purchaseId}" is not paid, so there is nothing to refund.`),
  alreadyRefunded: (purchaseId: string) => new ApiError(400, 'already_refunded', `Purchase "${purchaseId}" has already been refunded.`),
  disputed: (purchaseId: string) =>
    new ApiError(400, 'charge_disputed', `Purchase "${purchaseId}" is disputed: its payment cannot be refunded while the dispute is open or after it was lost.`),
  notDisputable: (purchaseId: string, why: string) => new ApiError(400, 'invalid_request', `Purchase "${purchaseId}" cannot be disputed: ${why}.`),
  disputeNotFound: (disputeId: string) => new ApiError(404, 'not_found', `No dispute "${disputeId}" exists.`),
  disputeClosed: (disputeId: string, outcome: DisputeOutcome) =>
    new ApiError(400, 'dispute_closed', `Dispute "${disputeId}" is already closed as ${outcome}.`),
  alreadyBooked: (processorId: string, why: string) => new ApiError(409, 'already_booked', `The processor's ${processorId} is booked already (${why}); nothing was adopted.`),
} as const;

/** An open dispute, or one the seller lost, holds the payment: no refund goes back over it. */
function assertRefundable(state: CheckoutState): void {
  const dispute = state.dispute;
  if (dispute && dispute.closed?.outcome !== 'won') throw CheckoutErrors.disputed(state.opened.purchase_id!);
}

/** Who and what every purchase event names. */
function purchaseParties(s: CheckoutSessionOpened) {
  return {
    session_id: s.session_id,
    purchase_id: s.purchase_id!,
    mode: s.mode,
    buyer_account_id: s.buyer_account_id,
    seller_account_id: s.seller_account_id!,
  };
}

/** The events a command records; [] for a repeat (a second completion, or a second record of a duplicate's refund). A second refund of a purchase throws already_refunded: of refunds racing, only the recorded one succeeds. */
export function decide(command: CheckoutCommand, state: CheckoutState): CheckoutEvent[] {
  const s = state.opened;
  switch (command.type) {
    case 'Complete': {
      if (state.completed) return [];
      if (command.refuseExpired && statusOf(state, new Date(command.now)) === 'expired') throw CheckoutErrors.expired();
      if (s.purpose === 'key_activation') {
        return [
          {
            type: 'KeyActivationPaid',
            data: {
              session_id: s.session_id,
              mode: s.mode,
              account_id: s.buyer_account_id,
              key_id: s.key_id!,
              amount_cents: s.amount_cents,
              currency: s.currency,
              payment_reference: command.payment_reference,
              paid_at: command.now,
            },
          },
        ];
      }
      const asset = s.asset!;
      if (command.ownedBy) {
        return [
          {
            type: 'DuplicatePaymentReceived',
            data: {
              session_id: s.session_id,
              mode: s.mode,
              buyer_account_id: s.buyer_account_id,
              seller_account_id: s.seller_account_id!,
              asset: { id: asset.id, slug: asset.slug, title: asset.title },
              amount_cents: s.amount_cents,
              currency: s.currency,
              payment_reference: command.payment_reference,
              owned_by_purchase_id: command.ownedBy,
              received_at: command.now,
            },
          },
        ];
      }
      return [
        {
          type: 'PurchaseCompleted',
          data: {
            ...purchaseParties(s),
            purchase: {
              id: s.purchase_id!,
              object: 'purchase',
              asset: { id: asset.id, slug: asset.slug, title: asset.title },
              amount_cents: s.amount_cents,
              currency: s.currency,
              status: 'paid',
              checkout_session_id: s.session_id,
              created_at: command.now,
              amount_refunded_cents: 0,
            },
            listing: command.listing ?? { id: asset.id, slug: asset.slug, title: asset.title },
            payment_reference: command.payment_reference,
            completed_at: command.now,
          },
        },
      ];
    }
    case 'RecordRefund': {
      if (!purchaseOf(state)) throw CheckoutErrors.notPaid(s.purchase_id ?? s.session_id);
      // Of refunds racing on one purchase, only the one recorded here succeeds.
      if (state.refunded) throw CheckoutErrors.alreadyRefunded(s.purchase_id!);
      assertRefundable(state);
      return [
        {
          type: 'PurchaseRefunded',
          data: {
            ...purchaseParties(s),
            purchase: { ...purchaseOf(state)!, amount_refunded_cents: s.amount_cents, status: 'refunded' },
            processor_refund_id: command.processor_refund_id,
            refunded_at: command.now,
          },
        },
      ];
    }
    case 'RecordProcessorFee': {
      // Once per payment: a confirmation delivered again finds the fee recorded.
      if (!state.completed || state.processorFee) return [];
      return [
        {
          type: 'ProcessorFeeCharged',
          data: {
            session_id: s.session_id,
            mode: s.mode,
            payment_reference: state.completed.payment_reference,
            fee_cents: command.fee_cents,
            currency: s.currency,
            processor_fee_id: command.processor_fee_id,
            charged_at: command.now,
          },
        },
      ];
    }
    case 'RecordPartialRefund': {
      if (!purchaseOf(state)) throw CheckoutErrors.notPaid(s.purchase_id ?? s.session_id);
      if (state.partialRefundIds.includes(command.processor_refund_id)) return [];
      // An operator's part is added to what is recorded: parts decided on the same state each count (issue 38, defect 6).
      const total = 'amount_cents' in command ? state.partiallyRefundedCents + command.amount_cents : command.refunded_total_cents;
      const part = total - state.partiallyRefundedCents;
      if (state.refunded || part <= 0) return [];
      // The part that empties the payment refunds the purchase: the seller's ledger takes what is left.
      if ('amount_cents' in command && total >= s.amount_cents) return decide({ type: 'RecordRefund', now: command.now, processor_refund_id: command.processor_refund_id }, state);
      // Reported by the processor: all of it is a full refund (RecordRefund).
      if (total >= s.amount_cents) return [];
      assertRefundable(state);
      return [
        {
          type: 'PurchasePartiallyRefunded',
          data: {
            ...purchaseParties(s),
            processor_refund_id: command.processor_refund_id,
            amount_cents: part,
            refunded_total_cents: total,
            currency: s.currency,
            refunded_at: command.now,
          },
        },
      ];
    }
    case 'RecordDispute': {
      const purchase = purchaseOf(state);
      if (!purchase) throw CheckoutErrors.notPaid(s.purchase_id ?? s.session_id);
      // The processor's report of this dispute again.
      if (state.dispute?.opened.dispute_id === command.dispute_id) return [];
      if (state.dispute) throw CheckoutErrors.notDisputable(purchase.id, `its payment is already disputed (${state.dispute.opened.dispute_id})`);
      if (state.refunded) throw CheckoutErrors.notDisputable(purchase.id, 'its payment was refunded');
      const left = s.amount_cents - state.partiallyRefundedCents;
      if (!Number.isSafeInteger(command.amount_cents) || command.amount_cents < 1 || command.amount_cents > left) {
        throw CheckoutErrors.notDisputable(purchase.id, `a dispute of ${command.amount_cents} cents is not between 1 and the ${left} cents not refunded`);
      }
      if (!Number.isSafeInteger(command.dispute_fee_cents) || command.dispute_fee_cents < 0) {
        throw CheckoutErrors.notDisputable(purchase.id, `a dispute fee of ${command.dispute_fee_cents} cents is not a whole number of cents`);
      }
      return [
        {
          type: 'PurchaseDisputed',
          data: {
            ...purchaseParties(s),
            dispute_id: command.dispute_id,
            amount_cents: command.amount_cents,
            dispute_fee_cents: command.dispute_fee_cents,
            currency: s.currency,
            reason: command.reason,
            disputed_at: command.now,
          },
        },
      ];
    }
    case 'CloseDispute': {
      const dispute = state.dispute;
      if (dispute?.opened.dispute_id !== command.dispute_id) throw CheckoutErrors.disputeNotFound(command.dispute_id);
      if (dispute.closed?.outcome === command.outcome) return [];
      if (dispute.closed) throw CheckoutErrors.disputeClosed(command.dispute_id, dispute.closed.outcome);
      const purchase = purchaseOf(state)!;
      return [
        {
          type: 'PurchaseDisputeClosed',
          data: {
            ...purchaseParties(s),
            dispute_id: command.dispute_id,
            outcome: command.outcome,
            purchase: { ...purchase, status: command.outcome === 'lost' ? 'disputed' : purchase.status },
            closed_at: command.now,
          },
        },
      ];
    }
    case 'AdoptMovement': {
      const booked = adoptionBooking(command, state);
      if (!booked.length) throw CheckoutErrors.alreadyBooked(command.processor_id, `session ${s.session_id} records it`);
      return [
        {
          type: 'ProcessorMovementAdopted',
          data: {
            session_id: s.session_id,
            mode: s.mode,
            purchase_id: s.purchase_id ?? null,
            kind: command.kind,
            processor_id: command.processor_id,
            payment_reference: state.completed!.payment_reference,
            amount_cents: command.amount_cents,
            currency: s.currency,
            actor: command.actor,
            reason: command.reason,
            booked_as: booked.map((e) => e.type).join(', '),
            adopted_at: command.now,
          },
        },
        ...booked,
      ];
    }
    case 'RecordDuplicateRefund': {
      const duplicate = duplicateOf(state);
      if (!duplicate || state.duplicateRefunded) return [];
      return [
        {
          type: 'DuplicatePaymentRefunded',
          data: {
            session_id: s.session_id,
            mode: s.mode,
            buyer_account_id: s.buyer_account_id,
            amount_cents: duplicate.amount_cents,
            currency: duplicate.currency,
            payment_reference: duplicate.payment_reference,
            processor_refund_id: command.processor_refund_id,
            settled: command.settled,
            refunded_at: command.now,
          },
        },
      ];
    }
  }
}

/**
 * What books an adopted movement, as the processor's own report of it would: a refund as a
 * part of the purchase's payment (the whole purchase when it empties it), a fee as the
 * session's processor fee. [] when the session records it already.
 */
function adoptionBooking(command: Extract<CheckoutCommand, { type: 'AdoptMovement' }>, state: CheckoutState): CheckoutEvent[] {
  if (!state.completed) throw CheckoutErrors.notPaid(state.opened.purchase_id ?? state.opened.session_id);
  if (command.kind === 'fee') {
    return decide({ type: 'RecordProcessorFee', now: command.now, fee_cents: command.amount_cents, processor_fee_id: command.processor_id }, state);
  }
  if (state.refunded?.processor_refund_id === command.processor_id || state.partialRefundIds.includes(command.processor_id)) return [];
  return decide({ type: 'RecordPartialRefund', now: command.now, processor_refund_id: command.processor_id, amount_cents: command.amount_cents }, state);
}

/** The duplicate payment a session recorded, if its payment was one. */
export function duplicateOf(state: CheckoutState): DuplicatePaymentReceived | undefined {
  const completed = state.completed;
  return completed && 'owned_by_purchase_id' in completed ? completed : undefined;
}

/** The completion of a paid purchase session, if its payment made a purchase. */
export function completedPurchaseOf(state: CheckoutState): PurchaseCompleted | undefined {
  const completed = state.completed;
  return completed && 'purchase' in completed ? completed : undefined;
}

/** The purchase a paid purchase session records, as it stands on the stream now. */
export function purchaseOf(state: CheckoutState): Purchase | undefined {
  const completed = completedPurchaseOf(state);
  const lost = state.dispute?.closed?.outcome === 'lost';
  return (
    completed && {
      ...completed.purchase,
      amount_refunded_cents: state.refunded ? completed.purchase.amount_cents : state.partiallyRefundedCents,
      status: state.refunded ? 'refunded' : lost ? 'disputed' : 'paid',
    }
  );
}

/** The checkout session object (spec part 2, "Checkout session"). */
export function toCheckoutSessionObject(state: CheckoutState, checkoutUrl: string, now: Date): Record<string, unknown> {
  const s = state.opened;
  return {
    id: s.session_id,
    object: 'checkout_session',
    purpose: s.purpose,
    status: statusOf(state, now),
    checkout_url: checkoutUrl,
    expires_at: Math.floor(Date.parse(s.expires_at) / 1000),
    amount_cents: s.amount_cents,
    currency: s.currency,
    asset: s.asset && { id: s.asset.id, slug: s.asset.slug, title: s.asset.title },
    success_url: s.success_url,
    cancel_url: s.cancel_url,
    created_at: s.created_at,
  };
}
