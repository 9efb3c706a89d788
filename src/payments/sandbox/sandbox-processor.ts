import { newId } from '../../platform/ids';
import type { CheckoutRequest, OpenedCheckout, PaymentProcessor, ProcessorRefund } from '../payment-processor';

/**
 * The embedded processor: the hosted checkout is this service's own page
 * ({PUBLIC_BASE_URL}/checkout/{id}, see sandbox-checkout-page.ts); refunds and payouts settle at once.
 */
export class SandboxProcessor implements PaymentProcessor {
  readonly name = 'sandbox' as const;
  readonly requiresPayoutDestination = false;

  constructor(private readonly publicBaseUrl: string) {}

  async openCheckout(request: CheckoutRequest): Promise<OpenedCheckout> {
    return { checkoutUrl: `${this.publicBaseUrl}/checkout/${request.sessionId}`, processorSessionId: request.sessionId };
  }

  async refund(): Promise<ProcessorRefund> {
    return { refundId: newId('re'), settled: true };
  }

  /** The sandbox settles payouts at once. */
  async transfer(): Promise<{ transferId: string }> {
    return { transferId: newId('tr') };
  }
}

/** decisions section 3: the sandbox's test cards. */
export const SANDBOX_CARDS = { pays: '4242424242424242', declines: '4000000000000002' } as const;
