import { Global, Module } from '@nestjs/common';
import { SETTINGS, Settings } from '../config/settings';
import { DATABASE, Database } from '../database/database';
import { ParkedProcessorEvents } from './parked-processor-events';
import { PAYMENT_PROCESSOR, PaymentProcessor } from './payment-processor';
import { SandboxProcessor } from './sandbox/sandbox-processor';
import { StripeProcessor } from './stripe/stripe-processor';
import { StripeWebhookController } from './stripe/stripe-webhook.controller';

/** The payment processor chosen by PAYMENTS, Stripe's webhook route, and where processor events no purchase takes are parked. */
@Global()
@Module({
  controllers: [StripeWebhookController],
  providers: [
    {
      provide: PAYMENT_PROCESSOR,
      inject: [SETTINGS, DATABASE],
      useFactory: (settings: Settings, db: Database): PaymentProcessor =>
        settings.payments === 'stripe'
          ? new StripeProcessor(settings.stripe, settings.publicBaseUrl)
          : new SandboxProcessor(settings.publicBaseUrl, settings.sandboxProcessorFee, db),
    },
    ParkedProcessorEvents,
  ],
  exports: [PAYMENT_PROCESSOR, ParkedProcessorEvents],
})
export class PaymentsModule {}
