import { Inject, Injectable, Logger } from '@nestjs/common';
import { PAYMENT_PROCESSOR, PaymentProcessor } from '../payments/payment-processor';
import type { Mode } from '../platform/mode';
import type { CheckoutState } from './checkout.decider';
import { CheckoutStreams } from './checkout-streams';

/**
 * Books what the processor kept of a session's payment (ProcessorFeeCharged), once per
 * payment. Two callers: the paying request, at once, and the fulfilment subscriber, after it
 * has recorded the payment's consequence, so a process killed between the sale and the fee
 * (issue 38, defect 2) leaves no fee unbooked: the subscriber's checkpoint moves only after
 * this ran. A fee the processor cannot tell yet (Stripe before it settles), or a failure to
 * ask, is logged and left for the next caller; `svc ledger verify` reports it (`fee_missing`).
 */
@Injectable()
export class ProcessorFees {
  private readonly logger = new Logger('ProcessorFees');

  constructor(
    private readonly streams: CheckoutStreams,
    @Inject(PAYMENT_PROCESSOR) private readonly processor: PaymentProcessor,
  ) {}

  async record(mode: Mode, sessionId: string, loaded?: CheckoutState): Promise<CheckoutState | undefined> {
    const state = loaded ?? (await this.streams.load(mode, sessionId));
    if (!state?.completed || state.processorFee) return state;
    const payment = { mode, paymentReference: state.completed.payment_reference, amountCents: state.opened.amount_cents, currency: state.opened.currency };
    const fee = await this.processor.feeOf(payment).catch((error: Error) => {
      this.logger.warn(`the processor's fee of session ${sessionId} is unknown for now: ${error.message}`);
      return undefined;
    });
    if (!fee) return state;
    const charged = await this.streams.handle(mode, sessionId, async () => ({
      type: 'RecordProcessorFee',
      now: new Date().toISOString(),
      fee_cents: fee.feeCents,
      processor_fee_id: fee.processorFeeId,
    }));
    return charged.state;
  }
}
