import { BeforeApplicationShutdown, Inject, Module, OnApplicationBootstrap } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module';
import { AdminGuard } from '../platform/auth/admin.guard';
import { CatalogModule } from '../catalog/catalog.module';
import { SETTINGS, Settings } from '../config/settings';
import { ArtifactStore } from './artifact-store';
import { ApproveGenerationJobHandler } from './commands/approve-job';
import { ClarifyGenerationJobHandler } from './commands/clarify-job';
import { CreateGenerationJobHandler } from './commands/create-job';
import { GrantCreditsHandler } from './commands/grant-credits';
import { PublishGenerationJobHandler } from './commands/publish-job';
import { RegenerateGenerationJobHandler } from './commands/regenerate-job';
import { Credits } from './credits';
import { LIVE_FACTORY_ENGINE, SANDBOX_FACTORY_ENGINE } from './engines/engine';
import { SandboxFactoryEngine } from './engines/sandbox-engine';
import { UnconfiguredFactoryEngine } from './engines/unconfigured-engine';
import { UpstreamFactoryEngine } from './engines/upstream-engine';
import { FactoryAdminController } from './factory-admin.controller';
import { JobCreation } from './job-creation';
import { JobQueries } from './job-queries';
import { JobSteps } from './job-steps';
import { JobStreams } from './job-streams';
import { JobWorker } from './job-worker';
import { JobsController } from './jobs.controller';
import { RebuildSettlement } from './rebuild-settlement';

/**
 * Generation jobs: prompt → plan → a validated robotics asset → a listing (decisions
 * section 7). The worker subscriber runs with the workers (settings.workers).
 */
@Module({
  imports: [AccountsModule, CatalogModule],
  controllers: [JobsController, FactoryAdminController],
  providers: [
    AdminGuard,
    { provide: SANDBOX_FACTORY_ENGINE, useValue: new SandboxFactoryEngine() },
    {
      provide: LIVE_FACTORY_ENGINE,
      inject: [SETTINGS],
      useFactory: (settings: Settings) => (settings.inferenceUpstream ? new UpstreamFactoryEngine(settings.inferenceUpstream) : new UnconfiguredFactoryEngine()),
    },
    ArtifactStore,
    Credits,
    JobStreams,
    JobCreation,
    RebuildSettlement,
    JobSteps,
    JobQueries,
    JobWorker,
    CreateGenerationJobHandler,
    ClarifyGenerationJobHandler,
    ApproveGenerationJobHandler,
    RegenerateGenerationJobHandler,
    PublishGenerationJobHandler,
    GrantCreditsHandler,
  ],
})
export class FactoryModule implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly worker: JobWorker,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.settings.workers) await this.worker.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.worker.stop();
  }
}
