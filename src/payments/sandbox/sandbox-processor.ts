import { newId } from '../../platform/ids';
import type { CheckoutRequest, FeeRequest, OpenedCheckout, PaymentProcessor, ProcessorFee, ProcessorRefund } from '../payment-processor';

/**
 * The embedded processor: the hosted checkout is this service's own page
 * ({PUBLIC_BASE_URL}/checkout/{id}, see sandbox-checkout-page.ts); refunds and payouts settle at once.
 */
export class SandboxProcessor implements PaymentProcessor {
  readonly name = 'sandbox' as const;
  readonly requiresPayoutDestination = false;

  constructor(
    private readonly publicBaseUrl: string,
    private readonly fee: { bps: number; fixedCents: number },
  ) {}

  async openCheckout(request: CheckoutRequest): Promise<OpenedCheckout> {
    return { checkoutUrl: `${this.publicBaseUrl}/checkout/${request.sessionId}`, processorSessionId: request.sessionId };
  }

  async refund(): Promise<ProcessorRefund> {
    return { refundId: newId('re'), settled: true };
  }

  /** A card processor's price, as Stripe's standard one: bps of the amount (rounded half up) plus a fixed part. */
  async feeOf(request: FeeRequest): Promise<ProcessorFee> {
    return { feeCents: Math.floor((request.amountCents * this.fee.bps + 5000) / 10000) + this.fee.fixedCents, processorFeeId: null };
  }

  /** The sandbox settles payouts at once. */
  async transfer(): Promise<{ transferId: string }> {
    return { transferId: newId('tr') };
  }
}

/** decisions section 3: the sandbox's test cards. */
export const SANDBOX_CARDS = { pays: '4242424242424242', declines: '4000000000000002' } as const;
