import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { PAYMENT_PROCESSOR, PaymentProcessor } from '../../payments/payment-processor';
import { ApiError, Errors } from '../../platform/errors';
import type { Mode } from '../../platform/mode';
import { CheckoutErrors, completedPurchaseOf, purchaseOf } from '../checkout';
import { CheckoutStreams } from '../checkout-streams';
import type { Purchase } from '../events';
import { Fulfilment } from '../fulfilment';
import { PurchaseLocation, PurchaseQueries } from '../purchase-queries';

/**
 * Records a refund the processor made, on the purchase's session stream at the revision
 * it was loaded at: of refunds racing, only the recorded one succeeds, the others throw
 * already_refunded. The fulfilment subscriber records the ledger debit and ends the
 * buyer's entitlement.
 */
async function recordRefund(streams: CheckoutStreams, fulfilment: Fulfilment, purchase: PurchaseLocation, refundId: string): Promise<Purchase> {
  const { state, position } = await streams.handle(purchase.mode, purchase.session_id, async () => ({
    type: 'RecordRefund',
    now: new Date().toISOString(),
    processor_refund_id: refundId,
  }));
  await fulfilment.waitFor(position);
  return purchaseOf(state)!;
}

/**
 * `svc purchases refund PURCHASE_ID`: asks the processor for the money back. The purchase
 * turns `refunded` once the processor confirms: at once in the sandbox, and for Stripe
 * when the refund succeeds at once or when its charge.refunded webhook arrives. The
 * purchases read model only locates the purchase's session (a fixed fact); whether it is
 * paid, refunded and by which payment is the session stream's say.
 */
export class RefundPurchaseCommand extends Command<Purchase> {
  constructor(readonly purchaseId: string) {
    super();
  }
}

@CommandHandler(RefundPurchaseCommand)
export class RefundPurchaseHandler implements ICommandHandler<RefundPurchaseCommand> {
  constructor(
    private readonly streams: CheckoutStreams,
    private readonly purchases: PurchaseQueries,
    private readonly fulfilment: Fulfilment,
    @Inject(PAYMENT_PROCESSOR) private readonly processor: PaymentProcessor,
  ) {}

  async execute({ purchaseId }: RefundPurchaseCommand): Promise<Purchase> {
    const located = await this.purchases.locate(purchaseId);
    if (!located) throw Errors.notFound('purchase');
    const session = await this.streams.load(located.mode, located.session_id);
    const completed = session && completedPurchaseOf(session);
    if (!session || !completed) throw Errors.notFound('purchase');
    if (session.refunded) throw CheckoutErrors.alreadyRefunded(purchaseId);
    const refund = await this.processor.refund({
      mode: located.mode,
      paymentReference: completed.payment_reference,
      // One refund per purchase, however often the operator retries.
      idempotencyKey: `refund-${purchaseId}`,
    });
    if (refund.settled) return recordRefund(this.streams, this.fulfilment, located, refund.refundId);
    return purchaseOf(session)!;
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
    private readonly purchases: PurchaseQueries,
    private readonly fulfilment: Fulfilment,
  ) {}

  /** undefined when the payment is none of our purchases (another use of the same Stripe account, or a duplicate payment). */
  async execute({ mode, paymentReference, refundId }: RecordProcessorRefundCommand): Promise<Purchase | undefined> {
    const located = await this.purchases.locateByPayment(mode, paymentReference);
    if (!located) return undefined;
    try {
      return await recordRefund(this.streams, this.fulfilment, located, refundId);
    } catch (error) {
      // Stripe's report of a refund already recorded (our own at once, or a redelivery): nothing to do.
      if (!(error instanceof ApiError && error.code === 'already_refunded')) throw error;
      return purchaseOf((await this.streams.load(mode, located.session_id))!);
    }
  }
}
