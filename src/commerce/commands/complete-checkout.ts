import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { toPublicObject } from '../../catalog/listing';
import { ListingStore } from '../../catalog/listing-store';
import { PAYMENT_PROCESSOR, PaymentProcessor } from '../../payments/payment-processor';
import type { Mode } from '../../platform/mode';
import { CheckoutCommand, CheckoutState, decide, duplicateOf } from '../checkout.decider';
import { CheckoutStreams } from '../checkout-streams';
import { EntitlementStreams } from '../entitlement-streams';
import { Fulfilment } from '../fulfilment';
import { ProcessorFees } from '../processor-fees';

/**
 * The one fulfilment path: the sandbox page and the Stripe webhook both end here once a
 * payment is confirmed. It records the completion on the session's stream (once, however
 * often or concurrently it is confirmed) and waits, bounded, for the fulfilment
 * subscriber to record the sale or the activation.
 *
 * A purchase first claims the buyer's entitlement stream, so of two sessions of one buyer
 * and asset paid at once only one becomes a purchase. The other records
 * DuplicatePaymentReceived and its money goes back through the processor at once; when the
 * processor fails, the next confirmation of the same session (Stripe redelivers until it
 * gets a 2xx) asks again under the same idempotency key.
 */
export class CompleteCheckoutCommand extends Command<CheckoutState> {
  constructor(
    readonly mode: Mode,
    readonly sessionId: string,
    readonly paymentReference: string,
    readonly refuseExpired: boolean,
  ) {
    super();
  }
}

@CommandHandler(CompleteCheckoutCommand)
export class CompleteCheckoutHandler implements ICommandHandler<CompleteCheckoutCommand> {

  constructor(
    private readonly streams: CheckoutStreams,
    private readonly entitlements: EntitlementStreams,
    private readonly listings: ListingStore,
    private readonly fulfilment: Fulfilment,
    @Inject(PAYMENT_PROCESSOR) private readonly processor: PaymentProcessor,
    private readonly fees: ProcessorFees,
  ) {}

  async execute({ mode, sessionId, paymentReference, refuseExpired }: CompleteCheckoutCommand): Promise<CheckoutState> {
    const { state, position } = await this.streams.handle(mode, sessionId, async (current) => {
      const now = new Date().toISOString();
      const command: CheckoutCommand = { type: 'Complete', now, payment_reference: paymentReference, listing: null, refuseExpired, ownedBy: null };
      // Decided as if unowned first: only a payment that would become a purchase claims the asset.
      if (decide(command, current)[0]?.type !== 'PurchaseCompleted') return command;
      const ownedBy = await this.entitlements.claim(current.opened, now);
      if (ownedBy) return { ...command, ownedBy };
      // The listing as the buyer got it, for listing.purchased; it may be unpublished since.
      const { state: listing } = await this.listings.load(mode, current.opened.asset!.id);
      return { ...command, listing: toPublicObject(listing) };
    });
    await this.fulfilment.waitFor(position);
    const charged = await this.recordProcessorFee(mode, sessionId, state);
    const duplicate = duplicateOf(charged);
    if (!duplicate || charged.duplicateRefunded) return charged;
    const refund = await this.processor.refund({
      mode,
      paymentReference: duplicate.payment_reference,
      idempotencyKey: `refund-duplicate-${sessionId}`,
    });
    const refunded = await this.streams.handle(mode, sessionId, async () => ({
      type: 'RecordDuplicateRefund',
      now: new Date().toISOString(),
      processor_refund_id: refund.refundId,
      settled: refund.settled,
    }));
    return refunded.state;
  }

  /** Books what the processor kept of the payment at once; the fulfilment subscriber books it too, should this request die first. */
  private async recordProcessorFee(mode: Mode, sessionId: string, state: CheckoutState): Promise<CheckoutState> {
    return (await this.fees.record(mode, sessionId, state)) ?? state;
  }
}
