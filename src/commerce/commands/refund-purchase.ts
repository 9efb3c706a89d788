import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { PAYMENT_PROCESSOR, PaymentProcessor } from '../../payments/payment-processor';
import { Errors } from '../../platform/errors';
import type { Mode } from '../../platform/mode';
import { CheckoutErrors, purchaseOf } from '../checkout';
import { CheckoutStreams } from '../checkout-streams';
import type { Purchase } from '../events';
import { Fulfilment } from '../fulfilment';
import { PurchaseQueries, PurchaseRecord } from '../purchase-queries';

/**
 * Records a refund the processor made, once; the fulfilment subscriber records the ledger
 * debit. Returns the purchase as the session's stream has it (a concurrent refund may have
 * recorded it an instant ago, before the read model shows it).
 */
async function recordRefund(streams: CheckoutStreams, fulfilment: Fulfilment, record: PurchaseRecord, refundId: string): Promise<Purchase> {
  const { state, position } = await streams.handle(record.mode, record.session_id, async () => ({
    type: 'RecordRefund',
    now: new Date().toISOString(),
    processor_refund_id: refundId,
  }));
  if (position) await fulfilment.waitFor(position);
  return purchaseOf(state)!;
}

/**
 * `svc purchases refund PURCHASE_ID`: asks the processor for the money back. The purchase
 * turns `refunded` once the processor confirms: at once in the sandbox, and for Stripe
 * when the refund succeeds at once or when its charge.refunded webhook arrives.
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
    const record = await this.purchases.findById(purchaseId);
    if (!record) throw Errors.notFound('purchase');
    const session = await this.streams.load(record.mode, record.session_id);
    if (session?.refunded) throw CheckoutErrors.alreadyRefunded(purchaseId);
    const refund = await this.processor.refund({
      mode: record.mode,
      paymentReference: record.payment_reference,
      // One refund per purchase, however often the operator retries.
      idempotencyKey: `refund-${purchaseId}`,
    });
    if (refund.settled) return recordRefund(this.streams, this.fulfilment, record, refund.refundId);
    return record.purchase;
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

  /** undefined when the payment is none of our purchases (another use of the same Stripe account). */
  async execute({ mode, paymentReference, refundId }: RecordProcessorRefundCommand): Promise<Purchase | undefined> {
    const record = await this.purchases.findByPaymentReference(mode, paymentReference);
    if (!record) return undefined;
    return recordRefund(this.streams, this.fulfilment, record, refundId);
  }
}
