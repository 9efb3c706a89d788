import { Global, Module } from '@nestjs/common';
import { SETTINGS, Settings } from '../config/settings';
import { DATABASE, Database } from '../database/database';
import { PAYMENT_PROCESSOR, PaymentProcessor } from './payment-processor';
import { SandboxProcessor } from './sandbox/sandbox-processor';
import { StripeProcessor } from './stripe/stripe-processor';
import { StripeWebhookController } from './stripe/stripe-webhook.controller';

/** The payment processor chosen by PAYMENTS, and Stripe's webhook route. */
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
  ],
  exports: [PAYMENT_PROCESSOR],
})
export class PaymentsModule {}
