import Stripe from 'stripe';
import type { StripeSettings } from '../../config/settings';
import { ApiError } from '../../platform/errors';
import type { Mode } from '../../platform/mode';
import type { CheckoutRequest, OpenedCheckout, PaymentProcessor, ProcessorRefund, RefundRequest } from '../payment-processor';

/** Stripe refuses a Checkout Session that expires sooner than 30 minutes from its own clock. */
const EXPIRY_MARGIN_SECONDS = 60;

export function paymentsUnavailable(mode: Mode): ApiError {
  return new ApiError(503, 'service_unavailable', `Payments are not configured for ${mode} mode; retry later or contact support.`);
}

/**
 * Stripe Checkout Sessions and refunds, one client per mode (its own secret key). Our
 * session id travels as client_reference_id and in the metadata of the session and of its
 * PaymentIntent, so the webhook (stripe-webhook.controller.ts) can name our session.
 */
export class StripeProcessor implements PaymentProcessor {
  readonly name = 'stripe' as const;
  private readonly clients: Partial<Record<Mode, Stripe>> = {};

  constructor(private readonly settings: StripeSettings, private readonly publicBaseUrl: string) {
    for (const mode of ['test', 'live'] as const) {
      const keys = settings[mode];
      if (keys) this.clients[mode] = new Stripe(keys.secretKey, { ...settings.apiBase, maxNetworkRetries: 2 });
    }
  }

  client(mode: Mode): Stripe {
    const client = this.clients[mode];
    if (!client) throw paymentsUnavailable(mode);
    return client;
  }

  webhookSecret(mode: Mode): string | undefined {
    return this.settings[mode]?.webhookSecret;
  }

  async openCheckout(request: CheckoutRequest): Promise<OpenedCheckout> {
    const metadata = { checkout_session_id: request.sessionId, mode: request.mode };
    // Stripe needs a success URL; without the buyer's own, its page returns to our status page.
    const ownPage = `${this.publicBaseUrl}/checkout/${request.sessionId}`;
    const session = await this.client(request.mode).checkout.sessions.create(
      {
        mode: 'payment',
        line_items: [
          { quantity: 1, price_data: { currency: request.currency, unit_amount: request.amountCents, product_data: { name: request.description } } },
        ],
        success_url: request.successUrl ?? ownPage,
        cancel_url: request.cancelUrl ?? ownPage,
        client_reference_id: request.sessionId,
        metadata,
        payment_intent_data: { metadata },
        expires_at: Math.floor(request.expiresAt.getTime() / 1000) + EXPIRY_MARGIN_SECONDS,
      },
      { idempotencyKey: `checkout-${request.sessionId}` },
    );
    if (!session.url) throw new Error(`Stripe returned checkout session ${session.id} without a url`);
    return { checkoutUrl: session.url, processorSessionId: session.id };
  }

  async refund(request: RefundRequest): Promise<ProcessorRefund> {
    const refund = await this.client(request.mode).refunds.create(
      { payment_intent: request.paymentReference },
      { idempotencyKey: request.idempotencyKey },
    );
    if (refund.status === 'failed' || refund.status === 'canceled') {
      throw new ApiError(402, 'refund_failed', `The processor did not refund the payment (refund ${refund.id} is ${refund.status}).`);
    }
    return { refundId: refund.id, settled: refund.status === 'succeeded' };
  }
}
