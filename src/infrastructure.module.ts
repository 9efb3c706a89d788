import { DynamicModule, Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { ALL_PROJECTIONS } from '../projections';
import { SETTINGS, Settings } from './config/settings';
import { DATABASE, Database } from './database/database';
import { EVENT_STORE, EventStore } from './event-store/event-store';
import { EventWriter } from './projection-runner/event-writer';
import { PROJECTIONS } from './projection-runner/projection';
import { ProjectionRunner, RUNNER_OPTIONS } from './projection-runner/projection-runner';

export interface Infrastructure {
  settings: Settings;
  database: Database;
  eventStore: EventStore;
  /** Close the database on shutdown (false when a test shares one database between apps). */
  ownsDatabase: boolean;
}

const INFRASTRUCTURE = Symbol('Infrastructure');

/** The ports every context uses, opened before Nest starts and closed when it stops. */
@Global()
@Module({})
export class InfrastructureModule implements OnApplicationShutdown {
  constructor(
    @Inject(INFRASTRUCTURE) private readonly infra: Infrastructure,
    private readonly projections: ProjectionRunner,
  ) {}

  static register(infra: Infrastructure): DynamicModule {
    return {
      module: InfrastructureModule,
      providers: [
        { provide: INFRASTRUCTURE, useValue: infra },
        { provide: SETTINGS, useValue: infra.settings },
        { provide: DATABASE, useValue: infra.database },
        { provide: EVENT_STORE, useValue: infra.eventStore },
        { provide: PROJECTIONS, useValue: ALL_PROJECTIONS },
        {
          provide: RUNNER_OPTIONS,
          useValue: {
            leaseTtlMs: infra.settings.consumerLeaseTtlMs,
            maxAttempts: infra.settings.consumerMaxAttempts,
            rebuildPausePercent: infra.settings.rebuildPausePercent,
          },
        },
        ProjectionRunner,
        EventWriter,
      ],
      exports: [SETTINGS, DATABASE, EVENT_STORE, ProjectionRunner, EventWriter],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.projections.stop();
    await this.infra.eventStore.close();
    if (this.infra.ownsDatabase) await this.infra.database.close();
  }
}
