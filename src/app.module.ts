import { DynamicModule, Global, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { CqrsModule } from '@nestjs/cqrs';
import { AccountsModule } from './accounts/accounts.module';
import { AdminModule } from './admin/admin.module';
import { CatalogModule } from './catalog/catalog.module';
import { PURCHASE_LOOKUP } from './catalog/entitlement';
import { EntitlementLookup } from './commerce/entitlement-lookup';
import { ACTIVATION_CHECKOUT } from './accounts/activation-checkout';
import { KeyActivationCheckout } from './commerce/key-activation-checkout';
import { PurchaseQueries } from './commerce/purchase-queries';
import { CommerceModule } from './commerce/commerce.module';
import { ConsoleModule } from './console/console.module';
import { Infrastructure, InfrastructureModule } from './infrastructure.module';
import { FactoryModule } from './factory/factory.module';
import { HealthModule } from './health/health.module';
import { IdempotencyModule } from './idempotency/idempotency.module';
import { MetricsModule } from './metrics/metrics.module';
import { InferenceModule } from './inference/inference.module';
import { LedgerModule } from './ledger/ledger.module';
import { OperatorsModule } from './operators/operators.module';
import { PaymentsModule } from './payments/payments.module';
import { ApiKeyGuard } from './accounts/api-key.guard';
import { ErrorFilter } from './platform/error-filter';
import { KnownParametersGuard } from './platform/known-parameters';
import { createValidationPipe } from './platform/http';
import { StorageModule } from './storage/storage.module';
import { WebhooksModule } from './webhooks/webhooks.module';

/**
 * The catalog asks commerce who bought what through its PURCHASE_LOOKUP port; commerce's
 * answer is bound here, in the composition root, so neither context reaches into the other's
 * providers (commerce imports the catalog, not the reverse).
 */
@Global()
@Module({ providers: [PurchaseQueries, { provide: PURCHASE_LOOKUP, useClass: EntitlementLookup }], exports: [PURCHASE_LOOKUP] })
class PurchaseLookupModule {}

/** Accounts opens a live premium key's activation checkout through its ACTIVATION_CHECKOUT port; commerce answers it. */
@Global()
@Module({ providers: [{ provide: ACTIVATION_CHECKOUT, useClass: KeyActivationCheckout }], exports: [ACTIVATION_CHECKOUT] })
class ActivationCheckoutModule {}

@Module({})
export class AppModule {
  static register(infra: Infrastructure): DynamicModule {
    return {
      module: AppModule,
      imports: [
        InfrastructureModule.register(infra),
        CqrsModule.forRoot(),
        PurchaseLookupModule,
        ActivationCheckoutModule,
        OperatorsModule,
        MetricsModule,
        AccountsModule,
        AdminModule,
        StorageModule,
        CatalogModule,
        WebhooksModule,
        LedgerModule,
        PaymentsModule,
        CommerceModule,
        InferenceModule,
        FactoryModule,
        HealthModule,
        ConsoleModule,
        IdempotencyModule,
      ],
      providers: [
        { provide: APP_FILTER, useClass: ErrorFilter },
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        // After the key's check: strict query parameters and bodies of body-less routes (issue 39).
        { provide: APP_GUARD, useClass: KnownParametersGuard },
        { provide: APP_PIPE, useFactory: createValidationPipe },
      ],
    };
  }
}
