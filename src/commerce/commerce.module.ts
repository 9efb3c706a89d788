import { BeforeApplicationShutdown, Inject, Module, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { LedgerModule } from '../ledger/ledger.module';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { AccountsModule } from '../accounts/accounts.module';
import { AdminGuard } from '../platform/auth/admin.guard';
import { CatalogModule } from '../catalog/catalog.module';
import { SETTINGS, Settings } from '../config/settings';
import { PAYMENT_PROCESSOR, PaymentProcessor } from '../payments/payment-processor';
import { sandboxCheckoutPage } from '../payments/sandbox/sandbox-checkout-page';
import { SandboxProcessor } from '../payments/sandbox/sandbox-processor';
import { Errors } from '../platform/errors';
import { CheckoutStreams } from './checkout-streams';
import { CommerceAdminController } from './commerce-admin.controller';
import { AdoptMovementHandler } from './commands/adopt-movement';
import { CompleteCheckoutHandler } from './commands/complete-checkout';
import { CloseDisputeHandler, RecordProcessorDisputeClosedHandler, RecordProcessorDisputeHandler } from './commands/dispute-purchase';
import { OpenKeyActivationCheckoutHandler, OpenPurchaseCheckoutHandler } from './commands/open-checkout';
import { PurchaseLocator, RecordProcessorPartialRefundHandler, RecordProcessorRefundHandler, RefundPurchaseHandler } from './commands/refund-purchase';
import { DisputeQueries } from './dispute-queries';
import { EntitlementStreams } from './entitlement-streams';
import { Fulfilment } from './fulfilment';
import { ProcessorFees } from './processor-fees';
import { ParkedProcessorEvents } from './parked-processor-events';
import { PurchaseQueries } from './purchase-queries';
import { PurchasesController } from './purchases.controller';
import { SandboxCheckoutService } from './sandbox-checkout';
import { StripeWebhookController } from './stripe-webhook.controller';

/**
 * Checkout sessions, purchases, refunds and key activation, over the payment processor
 * port. The fulfilment subscriber runs with the workers.
 */
@Module({
  imports: [AccountsModule, CatalogModule, LedgerModule],
  controllers: [PurchasesController, CommerceAdminController, StripeWebhookController],
  providers: [
    AdminGuard,
    CheckoutStreams,
    EntitlementStreams,
    PurchaseQueries,
    DisputeQueries,
    PurchaseLocator,
    Fulfilment,
    ProcessorFees,
    ParkedProcessorEvents,
    SandboxCheckoutService,
    OpenPurchaseCheckoutHandler,
    OpenKeyActivationCheckoutHandler,
    CompleteCheckoutHandler,
    RefundPurchaseHandler,
    AdoptMovementHandler,
    RecordProcessorRefundHandler,
    RecordProcessorPartialRefundHandler,
    RecordProcessorDisputeHandler,
    RecordProcessorDisputeClosedHandler,
    CloseDisputeHandler,
  ],
  // The console's listings page counts sales with the same read model's query.
  exports: [PurchaseQueries],
})
export class CommerceModule implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    @Inject(PAYMENT_PROCESSOR) private readonly processor: PaymentProcessor,
    private readonly http: HttpAdapterHost,
    private readonly sandbox: SandboxCheckoutService,
    private readonly fulfilment: Fulfilment,
  ) {}

  onModuleInit(): void {
    const fastify = this.http.httpAdapter.getInstance();
    // Not awaited, like the blob routes: the plugin loads at ready() (see StorageModule).
    if (this.processor instanceof SandboxProcessor) void fastify.register(sandboxCheckoutPage(this.sandbox, this.processor));
    if (this.processor.name !== 'stripe') {
      // No Stripe, no Stripe webhook: refused before its body is read or parsed, whatever its size.
      fastify.addHook('onRequest', async (request: FastifyRequest) => {
        if (request.routeOptions.url?.startsWith('/webhooks/stripe/')) throw Errors.notFound('Stripe webhook endpoint');
      });
    }
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.settings.workers) return;
    await this.fulfilment.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.fulfilment.stop();
  }
}
