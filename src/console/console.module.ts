import { Module, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { AccountQueries } from '../accounts/account-queries';
import { AccountsModule } from '../accounts/accounts.module';
import { KeptAccounts } from '../accounts/kept-accounts';
import { CatalogModule } from '../catalog/catalog.module';
import { CommerceModule } from '../commerce/commerce.module';
import { HealthModule } from '../health/health.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { IdempotentRequests } from '../idempotency/idempotent-requests';
import { InferenceModule } from '../inference/inference.module';
import { LedgerModule } from '../ledger/ledger.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import type { ConsoleSection } from './console-page';
import { consoleRoutes } from './console-routes';
import { AccountsSection } from './pages/accounts.page';
import { CreatorListingsSection } from './pages/creator-listings.page';
import { CreatorMoneySection } from './pages/creator-money.page';
import { CreatorPayoutsSection } from './pages/creator-payouts.page';
import { CreatorUsageSection } from './pages/creator-usage.page';
import { CreatorWebhooksSection } from './pages/creator-webhooks.page';
import { EventsSection } from './pages/events.page';
import { FindSection } from './pages/find.page';
import { LedgerSection } from './pages/ledger.page';
import { OverviewSection } from './pages/overview.page';
import { ReadModelsSection } from './pages/read-models.page';
import { WebhooksSection } from './pages/webhooks.page';
import { OperatorAuth } from '../operators/operator-auth';
import { ConsoleSessions } from './sessions';
import { SignInLimiter } from './sign-in-limiter';

/**
 * The console (/console): web pages for operators, finance and creators, rendered on the
 * server from the same query providers and commands the API uses; it adds no path to data.
 */
@Module({
  imports: [IdempotencyModule, AccountsModule, LedgerModule, InferenceModule, WebhooksModule, HealthModule, CatalogModule, CommerceModule],
  providers: [ConsoleSessions, SignInLimiter, OverviewSection, ReadModelsSection, AccountsSection, CreatorMoneySection, CreatorPayoutsSection, CreatorListingsSection, CreatorUsageSection, CreatorWebhooksSection, LedgerSection, EventsSection, WebhooksSection, FindSection],
})
export class ConsoleModule implements OnModuleInit {
  private readonly sections: ConsoleSection[];

  constructor(
    private readonly http: HttpAdapterHost,
    private readonly sessions: ConsoleSessions,
    private readonly limiter: SignInLimiter,
    private readonly accounts: AccountQueries,
    private readonly keys: KeptAccounts,
    private readonly idempotency: IdempotentRequests,
    private readonly operators: OperatorAuth,
    overview: OverviewSection,
    readModels: ReadModelsSection,
    accountsSection: AccountsSection,
    creatorMoney: CreatorMoneySection,
    creatorPayouts: CreatorPayoutsSection,
    creatorListings: CreatorListingsSection,
    creatorUsage: CreatorUsageSection,
    creatorWebhooks: CreatorWebhooksSection,
    ledger: LedgerSection,
    events: EventsSection,
    webhooks: WebhooksSection,
    find: FindSection,
  ) {
    this.sections = [overview, readModels, accountsSection, creatorMoney, creatorPayouts, creatorListings, creatorUsage, creatorWebhooks, ledger, events, webhooks, find];
  }

  onModuleInit(): void {
    const fastify = this.http.httpAdapter.getInstance();
    // Not awaited, like the blob routes: the plugin loads at ready().
    void fastify.register(
      consoleRoutes({
        operators: this.operators,
        sessions: this.sessions,
        accounts: this.accounts,
        keys: this.keys,
        limiter: this.limiter,
        pages: this.sections.flatMap((s) => s.pages()),
        actions: this.sections.flatMap((s) => s.actions()),
        files: this.sections.flatMap((s) => s.files?.() ?? []),
        idempotency: this.idempotency,
      }),
    );
  }
}
