import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { CqrsModule } from '@nestjs/cqrs';
import { LoggerModule } from 'nestjs-pino';
import type { Logger as Pino } from 'pino';
import { AccountsModule } from './accounts/accounts.module';
import { AdminModule } from './admin/admin.module';
import { CatalogModule } from './catalog/catalog.module';
import { CommerceModule } from './commerce/commerce.module';
import { Infrastructure, InfrastructureModule } from './infrastructure.module';
import { FactoryModule } from './factory/factory.module';
import { HealthModule } from './health/health.module';
import { MetricsModule } from './metrics/metrics.module';
import { InferenceModule } from './inference/inference.module';
import { LedgerModule } from './ledger/ledger.module';
import { PaymentsModule } from './payments/payments.module';
import { ApiKeyGuard } from './platform/auth/api-key.guard';
import { ErrorFilter } from './platform/error-filter';
import { createValidationPipe } from './platform/http';
import { StorageModule } from './storage/storage.module';
import { WebhooksModule } from './webhooks/webhooks.module';

@Module({})
export class AppModule {
  static register(infra: Infrastructure, logger: Pino): DynamicModule {
    return {
      module: AppModule,
      imports: [
        // Request context for records written while a request is handled; the request line itself is logRequests'.
        LoggerModule.forRoot({ pinoHttp: { logger, autoLogging: false, quietReqLogger: true } }),
        InfrastructureModule.register(infra),
        CqrsModule.forRoot(),
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
      ],
      providers: [
        { provide: APP_FILTER, useClass: ErrorFilter },
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        { provide: APP_PIPE, useFactory: createValidationPipe },
      ],
    };
  }
}
