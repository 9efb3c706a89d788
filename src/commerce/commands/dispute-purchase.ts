/*
 * Disputes of a purchase's payment, on its session's stream: opened by the processor
 * (Stripe's charge.dispute.created, the sandbox's disputed card), closed by the processor
 * (charge.dispute.closed) or, in the sandbox, by an operator (svc disputes close). The
 * fulfilment subscriber withholds and releases the seller's money and ends a lost purchase's
 * entitlement.
 */
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DisputeOutcome, PAYMENT_PROCESSOR, PaymentProcessor, ProcessorDispute } from '../../payments/payment-processor';
import { Errors } from '../../platform/errors';
import type { Mode } from '../../platform/mode';
import { CheckoutErrors } from '../checkout.decider';
import { CheckoutStreams } from '../checkout-streams';
import { Dispute, DisputeQueries } from '../dispute-queries';
import type { Purchase } from '../events';
import { Fulfilment } from '../fulfilment';
import { recordPurchaseFact } from '../purchase-facts';
import { PurchaseLocator } from './refund-purchase';

/** The processor opened a dispute on a payment. undefined: the payment is none of our purchases. */
export class RecordProcessorDisputeCommand extends Command<Purchase | undefined> {
  constructor(readonly mode: Mode, readonly paymentReference: string, readonly dispute: ProcessorDispute) {
    super();
  }
}

@CommandHandler(RecordProcessorDisputeCommand)
export class RecordProcessorDisputeHandler implements ICommandHandler<RecordProcessorDisputeCommand> {
  constructor(
    private readonly streams: CheckoutStreams,
    private readonly locator: PurchaseLocator,
    private readonly fulfilment: Fulfilment,
  ) {}

  async execute({ mode, paymentReference, dispute }: RecordProcessorDisputeCommand): Promise<Purchase | undefined> {
    const located = await this.locator.byPayment(mode, paymentReference);
    return (
      located &&
      recordPurchaseFact(this.streams, this.fulfilment, located, {
        type: 'RecordDispute',
        dispute_id: dispute.disputeId,
        amount_cents: dispute.amountCents,
        dispute_fee_cents: dispute.feeCents,
        reason: dispute.reason,
      })
    );
  }
}

/** The processor closed a dispute of a payment. undefined: the payment is none of our purchases. */
export class RecordProcessorDisputeClosedCommand extends Command<Purchase | undefined> {
  constructor(readonly mode: Mode, readonly paymentReference: string, readonly disputeId: string, readonly outcome: DisputeOutcome) {
    super();
  }
}

@CommandHandler(RecordProcessorDisputeClosedCommand)
export class RecordProcessorDisputeClosedHandler implements ICommandHandler<RecordProcessorDisputeClosedCommand> {
  constructor(
    private readonly streams: CheckoutStreams,
    private readonly locator: PurchaseLocator,
    private readonly fulfilment: Fulfilment,
  ) {}

  async execute({ mode, paymentReference, disputeId, outcome }: RecordProcessorDisputeClosedCommand): Promise<Purchase | undefined> {
    const located = await this.locator.byPayment(mode, paymentReference);
    return located && recordPurchaseFact(this.streams, this.fulfilment, located, { type: 'CloseDispute', dispute_id: disputeId, outcome });
  }
}

/**
 * `svc disputes close ID --won|--lost`: the processor settles the dispute first (the sandbox
 * records the outcome; Stripe refuses, it settles its own), then its outcome is recorded.
 */
export class CloseDisputeCommand extends Command<Dispute> {
  constructor(readonly disputeId: string, readonly outcome: DisputeOutcome) {
    super();
  }
}

@CommandHandler(CloseDisputeCommand)
export class CloseDisputeHandler implements ICommandHandler<CloseDisputeCommand> {
  constructor(
    private readonly streams: CheckoutStreams,
    private readonly locator: PurchaseLocator,
    private readonly fulfilment: Fulfilment,
    private readonly disputes: DisputeQueries,
    @Inject(PAYMENT_PROCESSOR) private readonly processor: PaymentProcessor,
  ) {}

  async execute({ disputeId, outcome }: CloseDisputeCommand): Promise<Dispute> {
    if (outcome !== 'won' && outcome !== 'lost') throw Errors.validationFailed('Invalid field "outcome": must be one of won, lost.');
    const located = await this.locator.byDispute(disputeId);
    if (!located) throw Errors.notFound('dispute');
    // The first close at the processor is final: a second, other outcome records the first.
    const settled = await this.processor.closeDispute({ mode: located.mode, disputeId, outcome });
    await recordPurchaseFact(this.streams, this.fulfilment, located, { type: 'CloseDispute', dispute_id: disputeId, outcome: settled });
    if (settled !== outcome) throw CheckoutErrors.disputeClosed(disputeId, settled);
    return (await this.disputes.find(disputeId))!;
  }
}
