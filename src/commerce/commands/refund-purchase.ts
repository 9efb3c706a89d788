import { Inject, Injectable } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '../../event-store/event-store';
import { PAYMENT_PROCESSOR, PaymentProcessor } from '../../payments/payment-processor';
import { ApiError, Errors } from '../../platform/errors';
import { newId } from '../../platform/ids';
import type { Mode } from '../../platform/mode';
import { ProjectionRunner } from '../../projection-runner/projection-runner';
import { CheckoutErrors, completedPurchaseOf, purchaseOf } from '../checkout.decider';
import { CheckoutStreams } from '../checkout-streams';
import type { Purchase } from '../events';
import { Fulfilment } from '../fulfilment';
import { recordPurchaseFact } from '../purchase-facts';
import { DisputeQueries, DISPUTES_READ_MODEL } from '../dispute-queries';
import { PurchaseLocation, PurchaseQueries, PURCHASES_READ_MODEL } from '../purchase-queries';

/**
 * The purchases read model only locates a session (a fixed fact), but a purchase completed a
 * moment ago may not be in it yet: before answering "no such purchase", wait until it has
 * seen the whole log. Still late (a held horizon, a stalled projection): 503, so Stripe
 * delivers its webhook again and an operator retries, instead of a refund being dropped.
 */
@Injectable()
export class PurchaseLocator {
  constructor(
    private readonly purchases: PurchaseQueries,
    private readonly disputes: DisputeQueries,
    private readonly runner: ProjectionRunner,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  byId(purchaseId: string): Promise<PurchaseLocation | undefined> {
    return this.fresh(PURCHASES_READ_MODEL, () => this.purchases.locate(purchaseId));
  }

  byPayment(mode: Mode, paymentReference: string): Promise<PurchaseLocation | undefined> {
    return this.fresh(PURCHASES_READ_MODEL, () => this.purchases.locateByPayment(mode, paymentReference));
  }

  /** The disputed purchase's session, by the dispute's id. */
  byDispute(disputeId: string): Promise<PurchaseLocation | undefined> {
    return this.fresh(DISPUTES_READ_MODEL, () => this.disputes.locate(disputeId));
  }

  private async fresh(projection: string, locate: () => Promise<PurchaseLocation | undefined>): Promise<PurchaseLocation | undefined> {
    const found = await locate();
    if (found) return found;
    if (!(await this.runner.waitFor(await this.store.headPosition(), { projections: [projection] }))) {
      throw Errors.serviceUnavailable('Purchases are still being indexed; try again in a moment.');
    }
    return locate();
  }
}

/**
 * `svc purchases refund PURCHASE_ID [--amount CENTS]`: asks the processor for the money back,
 * all of it that is not refunded yet, or a part. A whole refund turns the purchase `refunded`
 * once the processor confirms: at once in the sandbox, and for Stripe when the refund succeeds
 * at once or when its charge.refunded webhook arrives. A part leaves it `paid`; the seller's
 * ledger gives back that part, fee in proportion. Whether it is paid, refunded and by which
 * payment is the session stream's say (PurchaseLocator).
 */
export class RefundPurchaseCommand extends Command<Purchase> {
  constructor(
    readonly purchaseId: string,
    readonly amountCents?: number,
    /** The operator's Idempotency-Key: a retry under it (after a crash) is the same processor refund. */
    readonly idempotencyKey?: string,
  ) {
    super();
  }
}

@CommandHandler(RefundPurchaseCommand)
export class RefundPurchaseHandler implements ICommandHandler<RefundPurchaseCommand> {
  constructor(
    private readonly streams: CheckoutStreams,
    private readonly locator: PurchaseLocator,
    private readonly fulfilment: Fulfilment,
    @Inject(PAYMENT_PROCESSOR) private readonly processor: PaymentProcessor,
  ) {}

  async execute({ purchaseId, amountCents, idempotencyKey }: RefundPurchaseCommand): Promise<Purchase> {
    const located = await this.locator.byId(purchaseId);
    if (!located) throw Errors.notFound('purchase');
    const session = await this.streams.load(located.mode, located.session_id);
    const completed = session && completedPurchaseOf(session);
    if (!session || !completed) throw Errors.notFound('purchase');
    if (session.refunded) throw CheckoutErrors.alreadyRefunded(purchaseId);
    // The processor would refuse too (Stripe: charge_disputed); the decider says it first.
    if (session.dispute && session.dispute.closed?.outcome !== 'won') throw CheckoutErrors.disputed(purchaseId);
    const refundedSoFar = session.partiallyRefundedCents;
    const left = session.opened.amount_cents - refundedSoFar;
    // Under a key, the part may be the one already refunded (a retry): what is left then is the processor's to check.
    const limit = idempotencyKey ? session.opened.amount_cents : left;
    if (amountCents !== undefined && (!Number.isSafeInteger(amountCents) || amountCents < 1 || amountCents > limit)) {
      throw Errors.validationFailed(`Invalid field "amount_cents": must be an integer between 1 and ${limit}, what is not refunded of the purchase.`);
    }
    const partial = amountCents !== undefined && amountCents < (idempotencyKey ? session.opened.amount_cents : left);
    const refund = await this.processor.refund({
      mode: located.mode,
      paymentReference: completed.payment_reference,
      // A whole refund is one per purchase: retried, or raced, the same refund. Each part is a
      // refund of its own (its own key), and the processor refuses parts beyond the payment, so
      // requests that read the same state never share one refund (issue 38, defect 6).
      // The operator's key names the processor refund (issue 38, defect 5): a retry after a crash
      // finds the refund made before it, and records it (once: by its processor id).
      idempotencyKey: idempotencyKey ? `refund-${purchaseId}-key-${idempotencyKey}` : partial ? `refund-${purchaseId}-part-${newId('rfq')}` : `refund-${purchaseId}`,
      ...(partial ? { amountCents } : {}),
    });
    if (!refund.settled) return purchaseOf(session)!;
    // Of whole refunds racing on one purchase, only the recorded one succeeds; the others throw already_refunded.
    // Recorded as what the processor refunded: a key retried without --amount may name an earlier part.
    if (!partial && refund.amountCents >= left) return recordPurchaseFact(this.streams, this.fulfilment, located, { type: 'RecordRefund', processor_refund_id: refund.refundId });
    return recordPurchaseFact(this.streams, this.fulfilment, located, { type: 'RecordPartialRefund', processor_refund_id: refund.refundId, amount_cents: refund.amountCents });
  }
}

/** A refund the processor reports (Stripe charge.refunded), named by its payment. */
export class RecordProcessorRefundCommand extends Command<Purchase | undefined> {
  constructor(readonly mode: Mode, readonly paymentReference: string, readonly refundId: string) {
    super();
  }
}

@CommandHandler(RecordProcessorRefundCommand)
export class RecordProcessorRefundHandler implements ICommandHandler<RecordProcessorRefundCommand> {
  constructor(
    private readonly streams: CheckoutStreams,
    private readonly locator: PurchaseLocator,
    private readonly fulfilment: Fulfilment,
  ) {}

  /** undefined when the payment is none of our purchases (another use of the same Stripe account, or a duplicate payment). */
  async execute({ mode, paymentReference, refundId }: RecordProcessorRefundCommand): Promise<Purchase | undefined> {
    const located = await this.locator.byPayment(mode, paymentReference);
    if (!located) return undefined;
    try {
      return await recordPurchaseFact(this.streams, this.fulfilment, located, { type: 'RecordRefund', processor_refund_id: refundId });
    } catch (error) {
      // Stripe's report of a refund already recorded (our own at once, or a redelivery): nothing to do.
      if (!(error instanceof ApiError && error.code === 'already_refunded')) throw error;
      return purchaseOf((await this.streams.load(mode, located.session_id))!);
    }
  }
}

/**
 * A partial refund the processor reports (Stripe charge.refunded with less than the whole
 * charge refunded), by its payment and the running total refunded: the purchase stays paid.
 */
export class RecordProcessorPartialRefundCommand extends Command<Purchase | undefined> {
  constructor(readonly mode: Mode, readonly paymentReference: string, readonly refundId: string, readonly refundedTotalCents: number) {
    super();
  }
}

@CommandHandler(RecordProcessorPartialRefundCommand)
export class RecordProcessorPartialRefundHandler implements ICommandHandler<RecordProcessorPartialRefundCommand> {
  constructor(
    private readonly streams: CheckoutStreams,
    private readonly locator: PurchaseLocator,
    private readonly fulfilment: Fulfilment,
  ) {}

  /** undefined when the payment is none of our purchases. */
  async execute({ mode, paymentReference, refundId, refundedTotalCents }: RecordProcessorPartialRefundCommand): Promise<Purchase | undefined> {
    const located = await this.locator.byPayment(mode, paymentReference);
    if (!located) return undefined;
    return recordPurchaseFact(this.streams, this.fulfilment, located, { type: 'RecordPartialRefund', processor_refund_id: refundId, refunded_total_cents: refundedTotalCents });
  }
}
