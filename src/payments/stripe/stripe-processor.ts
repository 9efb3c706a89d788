import { Logger } from '@nestjs/common';
import Stripe from 'stripe';
import type { StripeSettings } from '../../config/settings';
import { ApiError } from '../../platform/errors';
import type { Mode } from '../../platform/mode';
import {
  CheckoutRequest,
  FeeRequest,
  OpenedCheckout,
  PaymentProcessor,
  ProcessorFee,
  ProcessorRecord,
  ProcessorRecordsRequest,
  ProcessorRefund,
  RefundRequest,
  TransferRefusedError,
  TransferRequest,
} from '../payment-processor';

/** Stripe refuses a Checkout Session that expires sooner than 30 minutes from its own clock. */
const EXPIRY_MARGIN_SECONDS = 60;

const logger = new Logger('Stripe');

/**
 * What a Stripe failure means to our caller. Stripe's own message (which can name our key)
 * stays in the log; the caller learns that the processor failed and may retry.
 */
function processorError(error: unknown): unknown {
  if (!(error instanceof Stripe.errors.StripeError)) return error;
  logger.error(`${error.type} ${error.statusCode ?? '-'} ${error.code ?? ''}: ${error.message}`);
  return new ApiError(502, 'payment_processor_error', 'The payment processor could not complete the request; retry later.');
}

function paymentsUnavailable(mode: Mode): ApiError {
  return new ApiError(503, 'service_unavailable', `Payments are not configured for ${mode} mode; retry later or contact support.`);
}

/**
 * Stripe Checkout Sessions, refunds and Connect transfers for payouts, one client per mode (its own secret key). Our
 * session id travels as client_reference_id and in the metadata of the session and of its
 * PaymentIntent, so the webhook (stripe-webhook.controller.ts) can name our session.
 */
export class StripeProcessor implements PaymentProcessor {
  readonly name = 'stripe' as const;
  readonly requiresPayoutDestination = true;
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
    const params: Stripe.Checkout.SessionCreateParams = {
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
    };
    const session = await this.client(request.mode)
      .checkout.sessions.create(params, { idempotencyKey: `checkout-${request.sessionId}` })
      .catch((error) => {
        throw processorError(error);
      });
    if (!session.url) throw new Error(`Stripe returned checkout session ${session.id} without a url`);
    return { checkoutUrl: session.url, processorSessionId: session.id };
  }

  async refund(request: RefundRequest): Promise<ProcessorRefund> {
    const refund = await this.client(request.mode)
      .refunds.create(
        { payment_intent: request.paymentReference, ...(request.amountCents === undefined ? {} : { amount: request.amountCents }) },
        { idempotencyKey: request.idempotencyKey },
      )
      .catch((error) => {
        // A part beyond what is left: another refund, racing this one, took the rest (issue 38, defect 6).
        if (error?.code === 'amount_too_large') throw new ApiError(409, 'refund_exceeds_remaining', `The processor refused the refund: ${error.message}`);
        throw processorError(error);
      });
    if (refund.status === 'failed' || refund.status === 'canceled') {
      throw new ApiError(402, 'refund_failed', `The processor did not refund the payment (refund ${refund.id} is ${refund.status}).`);
    }
    return { refundId: refund.id, settled: refund.status === 'succeeded', amountCents: refund.amount };
  }

  /** The fee on the payment's charge, from its balance transaction; undefined until Stripe has made one. */
  async feeOf(request: FeeRequest): Promise<ProcessorFee | undefined> {
    if (!request.paymentReference.startsWith('pi_')) return undefined;
    const intent = await this.client(request.mode)
      .paymentIntents.retrieve(request.paymentReference, { expand: ['latest_charge.balance_transaction'] })
      .catch((error) => {
        throw processorError(error);
      });
    const charge = intent.latest_charge;
    const balance = typeof charge === 'object' && charge ? charge.balance_transaction : null;
    if (!balance || typeof balance !== 'object') return undefined;
    return { feeCents: balance.fee, processorFeeId: balance.id };
  }

  async transfer(request: TransferRequest): Promise<{ transferId: string }> {
    if (!request.destination) throw new TransferRefusedError('No payout destination is set; set one with svc payouts destination.', 'no_destination');
    try {
      const transfer = await this.client(request.mode).transfers.create(
        {
          amount: request.amountCents,
          currency: request.currency,
          destination: request.destination,
          metadata: { payout_id: request.payoutId, mode: request.mode },
        },
        { idempotencyKey: `payout-${request.payoutId}` },
      );
      return { transferId: transfer.id };
    } catch (error) {
      // Stripe answered and refused: nothing moved. A conflict, a rate limit, a 5xx or a lost
      // connection leaves the outcome open; the payout stays in flight and is retried.
      const status = (error as { statusCode?: number }).statusCode ?? 0;
      if (error instanceof Stripe.errors.StripeError && status >= 400 && status < 500 && status !== 409 && status !== 429) {
        logger.error(`transfer of payout ${request.payoutId} refused: ${error.message}`);
        throw new TransferRefusedError(`Stripe refused the transfer of payout ${request.payoutId} (${error.code ?? error.type}).`, error.code ?? error.type);
      }
      // Outcome unknown: the payout stays in flight and the next run sends the same transfer.
      throw processorError(error);
    }
  }

  /** Stripe closes its disputes on the evidence the seller submits in its dashboard; charge.dispute.closed reports the outcome. */
  async closeDispute(request: { mode: Mode; disputeId: string }): Promise<never> {
    throw new ApiError(
      400,
      'invalid_request',
      `Dispute ${request.disputeId} is Stripe's to settle: respond to it in the Stripe dashboard; its charge.dispute.closed webhook records the outcome here.`,
    );
  }

  /**
   * Stripe's own books for the period: its balance transactions, each with its source
   * expanded, as our events name them: a charge by its PaymentIntent (and the fee Stripe kept
   * on it by the balance transaction's id), a refund and a transfer by their own ids.
   */
  async records(request: ProcessorRecordsRequest): Promise<ProcessorRecord[]> {
    const created = { ...(request.from && { gte: Math.floor(request.from.getTime() / 1000) }), ...(request.to && { lt: Math.ceil(request.to.getTime() / 1000) }) };
    const records: ProcessorRecord[] = [];
    const list = this.client(request.mode).balanceTransactions.list({ limit: 100, expand: ['data.source'], ...(request.from || request.to ? { created } : {}) });
    try {
      for await (const bt of list) {
        const source = typeof bt.source === 'object' && bt.source ? (bt.source as { id: string; object: string; payment_intent?: string | { id: string } | null }) : undefined;
        const at = new Date(bt.created * 1000).toISOString();
        const record = (kind: ProcessorRecord['kind'], id: string, amount: number, paymentId?: string) =>
          records.push({ kind, id, amount_cents: amount, currency: bt.currency, created_at: at, ...(paymentId ? { payment_id: paymentId } : {}) });
        const intent = source?.payment_intent;
        const intentId = typeof intent === 'string' ? intent : intent?.id;
        if (bt.type === 'charge' || bt.type === 'payment') {
          record('charge', intentId ?? source?.id ?? bt.id, bt.amount);
          if (bt.fee) record('fee', bt.id, bt.fee, intentId ?? source?.id);
        } else if (bt.type === 'refund' || bt.type === 'payment_refund') {
          // A refund names its payment (the PaymentIntent our sale names): svc ledger adopt books an orphaned one on it.
          record('refund', source?.id ?? bt.id, -bt.amount, intentId);
        } else if (bt.type === 'transfer') {
          record('transfer', source?.id ?? bt.id, -bt.amount);
        } else if (bt.reporting_category === 'dispute') {
          // The disputed amount and the dispute fee, withdrawn together.
          record('dispute', source?.id ?? bt.id, -bt.net);
        } else if (bt.reporting_category === 'dispute_reversal') {
          record('dispute_reversal', source?.id ?? bt.id, bt.net);
        }
      }
    } catch (error) {
      throw processorError(error);
    }
    return records;
  }
}
