import { Global, Module } from '@nestjs/common';
import { SETTINGS, Settings } from '../config/settings';
import { DATABASE, Database } from '../database/database';
import { PAYMENT_PROCESSOR, PaymentProcessor } from './payment-processor';
import { SandboxProcessor } from './sandbox/sandbox-processor';
import { StripeProcessor } from './stripe/stripe-processor';

/** The payment processor port: the adapter PAYMENTS chooses. Stripe's webhook route is commerce's (an inbound adapter of its commands). */
@Global()
@Module({
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
