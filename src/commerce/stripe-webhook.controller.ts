import { Controller, Headers, HttpCode, Inject, Logger, Param, Post, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { FastifyRequest } from 'fastify';
import type Stripe from 'stripe';
import { CompleteCheckoutCommand } from './commands/complete-checkout';
import { RecordProcessorDisputeClosedCommand, RecordProcessorDisputeCommand } from './commands/dispute-purchase';
import { RecordProcessorPartialRefundCommand, RecordProcessorRefundCommand } from './commands/refund-purchase';
import { modeOfSessionId } from './checkout.decider';
import { WithoutApiKey } from '../platform/auth/auth-context';
import { BodyLimit } from '../platform/body-limit';
import { ApiError, Errors } from '../platform/errors';
import { isMode, Mode } from '../platform/mode';
import { ParkedProcessorEvents, ProcessorEventParked } from './parked-processor-events';
import { PAYMENT_PROCESSOR, PaymentProcessor } from '../payments/payment-processor';
import type { StripeProcessor } from '../payments/stripe/stripe-processor';

/**
 * Stripe's events are a few kilobytes; the largest objects they carry (a charge or a session
 * with full metadata: 50 keys of 500 characters) stay well under 64 KiB. 256 KiB leaves room
 * and refuses anything larger before it is read or scanned for a signature.
 */
export const STRIPE_EVENT_MAX_BYTES = 256 * 1024;

const idOf = (ref: string | { id: string } | null | undefined) => (typeof ref === 'string' ? ref : ref?.id);

/**
 * POST /webhooks/stripe/{mode} (decisions section 3): Stripe's events, verified with the
 * SDK against the mode's webhook secret, reach the one fulfilment path. A bad signature is
 * 400 and records nothing; an event type we do not act on is 200 and ignored, as Stripe
 * expects, so it stops retrying it.
 */
@Controller('webhooks/stripe')
@WithoutApiKey()
export class StripeWebhookController {
  private readonly logger = new Logger('StripeWebhook');

  constructor(
    private readonly commands: CommandBus,
    @Inject(PAYMENT_PROCESSOR) private readonly processor: PaymentProcessor,
    private readonly parked: ParkedProcessorEvents,
  ) {}

  @Post(':mode')
  @HttpCode(200)
  @BodyLimit(STRIPE_EVENT_MAX_BYTES)
  async receive(@Param('mode') mode: string, @Headers('stripe-signature') signature: string | undefined, @Req() request: FastifyRequest) {
    const stripe = this.processor.name === 'stripe' ? (this.processor as StripeProcessor) : undefined;
    const secret = isMode(mode) ? stripe?.webhookSecret(mode) : undefined;
    if (!stripe || !secret || !isMode(mode)) throw Errors.notFound('Stripe webhook endpoint');
    let event: Stripe.Event;
    try {
      event = stripe.client(mode).webhooks.constructEvent(request.rawBody ?? '', signature ?? '', secret);
    } catch (error) {
      throw new ApiError(400, 'invalid_signature', `The Stripe-Signature header does not verify: ${(error as Error).message}`);
    }
    if (event.livemode !== (mode === 'live')) {
      throw new ApiError(400, 'invalid_request', `A ${event.livemode ? 'live' : 'test'}-mode Stripe event was sent to the ${mode} endpoint.`);
    }
    const handled = await this.handle(mode, event);
    return { received: true, handled };
  }

  /** True when the event changed or confirmed something of ours. */
  private async handle(mode: Mode, event: Stripe.Event): Promise<boolean> {
    switch (event.type) {
      case 'checkout.session.completed':
      case 'checkout.session.async_payment_succeeded': {
        const session = event.data.object;
        // A delayed payment method completes the session unpaid; its success event follows.
        if (session.payment_status !== 'paid') return false;
        const sessionId = session.metadata?.checkout_session_id ?? session.client_reference_id;
        if (!sessionId || modeOfSessionId(sessionId) !== mode) {
          this.logger.warn(`${event.id}: checkout session ${session.id} is not one of ours; ignored`);
          return false;
        }
        const paymentReference = idOf(session.payment_intent) ?? session.id;
        try {
          await this.commands.execute(new CompleteCheckoutCommand(mode, sessionId, paymentReference, false));
        } catch (error) {
          // Another deployment on the same Stripe account: answering 404 would make Stripe retry for days.
          if (!(error instanceof ApiError && error.status === 404)) throw error;
          this.logger.warn(`${event.id}: checkout session ${sessionId} is not in this service's store; ignored`);
          return false;
        }
        return true;
      }
      case 'charge.refunded': {
        const charge = event.data.object;
        const paymentIntent = idOf(charge.payment_intent);
        if (!paymentIntent) return false;
        // Newer API versions leave `refunds` out of the charge; the charge (and, for a part, the
        // total refunded so far) then names the refund.
        const newest = idOf(charge.refunds?.data?.[0]);
        if (charge.refunded) return (await this.commands.execute(new RecordProcessorRefundCommand(mode, paymentIntent, newest ?? charge.id))) !== undefined;
        // A part: the purchase stays paid; the seller's ledger gives back that part, fee in proportion.
        const partial = new RecordProcessorPartialRefundCommand(mode, paymentIntent, newest ?? `${charge.id}/${charge.amount_refunded}`, charge.amount_refunded);
        const about = { object_id: charge.id, payment_reference: paymentIntent, amount_cents: charge.amount_refunded, currency: charge.currency };
        return this.recordOrPark(mode, event, about, () => this.commands.execute(partial));
      }
      case 'charge.dispute.created': {
        const dispute = event.data.object;
        // Stripe withdraws the disputed amount and its dispute fee in the dispute's balance transactions.
        const fee = (dispute.balance_transactions ?? []).reduce((sum, bt) => sum + (bt.amount < 0 ? bt.fee : 0), 0);
        const opened = { disputeId: dispute.id, amountCents: dispute.amount, feeCents: fee, reason: dispute.reason };
        const about = { object_id: dispute.id, payment_reference: idOf(dispute.payment_intent) ?? null, amount_cents: dispute.amount, currency: dispute.currency };
        return this.recordOrPark(mode, event, about, (payment) => this.commands.execute(new RecordProcessorDisputeCommand(mode, payment, opened)));
      }
      case 'charge.dispute.closed': {
        const dispute = event.data.object;
        // warning_closed: an inquiry that never became a chargeback; nothing was withdrawn.
        const outcome = dispute.status === 'won' ? 'won' : dispute.status === 'lost' ? 'lost' : undefined;
        if (!outcome) return false;
        const about = { object_id: dispute.id, payment_reference: idOf(dispute.payment_intent) ?? null, amount_cents: dispute.amount, currency: dispute.currency };
        return this.recordOrPark(mode, event, about, (payment) =>
          this.commands.execute(new RecordProcessorDisputeClosedCommand(mode, payment, dispute.id, outcome)),
        );
      }
      default:
        return false;
    }
  }

  /**
   * Records what a processor event says of one of our purchases. An event naming no purchase
   * of ours, or one our books refuse (a dispute of a refunded purchase), is parked with the
   * reason: not a 500 that Stripe would retry for days, and not dropped.
   */
  private async recordOrPark(
    mode: Mode,
    event: Stripe.Event,
    about: Pick<ProcessorEventParked, 'object_id' | 'payment_reference' | 'amount_cents' | 'currency'>,
    record: (paymentReference: string) => Promise<unknown>,
  ): Promise<boolean> {
    const park = (reason: string) =>
      this.parked.park({ mode, processor: 'stripe', processor_event_id: event.id, processor_event_type: event.type, ...about, reason }).then(() => false);
    if (!about.payment_reference) return park('it names no payment');
    try {
      if ((await record(about.payment_reference)) !== undefined) return true;
    } catch (error) {
      if (!(error instanceof ApiError && error.status < 500)) throw error;
      return park(error.message);
    }
    return park(`payment ${about.payment_reference} is none of our purchases`);
  }
}
