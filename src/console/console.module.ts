import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { AccountQueries } from '../accounts/account-queries';
import { AccountsModule } from '../accounts/accounts.module';
import { SETTINGS, Settings } from '../config/settings';
import { InferenceModule } from '../inference/inference.module';
import { LedgerModule } from '../ledger/ledger.module';
import type { ConsoleSection } from './console-page';
import { consoleRoutes } from './console-routes';
import { AccountsSection } from './pages/accounts.page';
import { CreatorMoneySection } from './pages/creator-money.page';
import { OverviewSection } from './pages/overview.page';
import { ReadModelsSection } from './pages/read-models.page';
import { ConsoleSessions } from './sessions';
import { SignInLimiter } from './sign-in-limiter';

/**
 * The console (/console): web pages for operators, finance and creators, rendered on the
 * server from the same query providers and commands the API uses; it adds no path to data.
 */
@Module({
  imports: [AccountsModule, LedgerModule, InferenceModule],
  providers: [ConsoleSessions, SignInLimiter, OverviewSection, ReadModelsSection, AccountsSection, CreatorMoneySection],
})
export class ConsoleModule implements OnModuleInit {
  private readonly sections: ConsoleSection[];

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly http: HttpAdapterHost,
    private readonly sessions: ConsoleSessions,
    private readonly limiter: SignInLimiter,
    private readonly accounts: AccountQueries,
    overview: OverviewSection,
    readModels: ReadModelsSection,
    accountsSection: AccountsSection,
    creatorMoney: CreatorMoneySection,
  ) {
    this.sections = [overview, readModels, accountsSection, creatorMoney];
  }

  onModuleInit(): void {
    const fastify = this.http.httpAdapter.getInstance();
    // Not awaited, like the blob routes: the plugin loads at ready().
    void fastify.register(
      consoleRoutes({
        adminToken: this.settings.adminToken!,
        sessions: this.sessions,
        accounts: this.accounts,
        limiter: this.limiter,
        pages: this.sections.flatMap((s) => s.pages()),
        actions: this.sections.flatMap((s) => s.actions()),
      }),
    );
  }
}
