import { Global, Module } from '@nestjs/common';
import { SETTINGS, Settings } from '../config/settings';
import { DATABASE, Database } from '../database/database';
import { PAYMENT_PROCESSOR, PaymentProcessor } from './payment-processor';
import { SandboxProcessor } from './sandbox/sandbox-processor';

/** The payment processor port: the adapter PAYMENTS chooses. Stripe's webhook route is commerce's (an inbound adapter of its commands). */
@Global()
@Module({
  providers: [
    {
      provide: PAYMENT_PROCESSOR,
      inject: [SETTINGS, DATABASE],
      // Stripe's client loads only where it is used (PAYMENTS=stripe).
      useFactory: async (settings: Settings, db: Database): Promise<PaymentProcessor> =>
        settings.payments === 'stripe'
          ? new (await import('./stripe/stripe-processor')).StripeProcessor(settings.stripe, settings.publicBaseUrl)
          : new SandboxProcessor(settings.publicBaseUrl, settings.sandboxProcessorFee, db),
    },
  ],
  exports: [PAYMENT_PROCESSOR],
})
export class PaymentsModule {}
