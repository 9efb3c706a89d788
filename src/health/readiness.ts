import { Inject, Injectable } from '@nestjs/common';
import { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { SETTINGS, Settings } from '../config/settings';
import { DATABASE, Database } from '../database/database';
import { pendingMigrations } from '../database/migrate';
import { EVENT_STORE, EventStore } from '../event-store/event-store';
import { ProjectionRunner } from '../projection-runner/projection-runner';
import { BLOB_STORE, BlobStore, describeFault } from '../storage/blob-store';

/**
 * How long GET /readyz waits for object storage (a HeadBucket on S3, a stat of the blobs
 * directory locally) before reporting it down: the checks run side by side, so this bounds
 * the probe's answer time too.
 */
export const STORAGE_PROBE_TIMEOUT_MS = 2_000;

/** The checks behind GET /readyz, one terminus indicator each. */
@Injectable()
export class Readiness {
  constructor(
    private readonly indicators: HealthIndicatorService,
    @Inject(DATABASE) private readonly db: Database,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly projections: ProjectionRunner,
    @Inject(SETTINGS) private readonly settings: Settings,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
  ) {}

  async database(): Promise<HealthIndicatorResult> {
    const check = this.indicators.check('database');
    try {
      await this.db.query('SELECT 1');
      const pending = await pendingMigrations(this.db);
      return pending.length ? check.down({ message: `migrations not applied: ${pending.join(', ')}` }) : check.up();
    } catch (error) {
      return check.down({ message: `unreachable: ${(error as Error).message}` });
    }
  }

  async eventStore(): Promise<HealthIndicatorResult> {
    const check = this.indicators.check('event_store');
    try {
      return check.up({ head: await this.store.headPosition() });
    } catch (error) {
      return check.down({ message: `unreachable: ${(error as Error).message}` });
    }
  }

  /** Object storage answers (uploads, publishing and artifacts need it; downloads are signed URLs to it). */
  async storage(): Promise<HealthIndicatorResult> {
    const check = this.indicators.check('storage');
    try {
      await this.blobs.probe(STORAGE_PROBE_TIMEOUT_MS);
      return check.up();
    } catch (error) {
      return check.down({ message: `unreachable: ${describeFault(error)}` });
    }
  }

  /**
   * Every read model is served by a build of this code's version that has read every event
   * older than READY_MAX_LAG_SECONDS, and not stalled. While a new version is still far behind, the live
   * build is another version's (its meaning may differ): this instance is not ready, so a
   * rolling deploy keeps the old instances serving until the new build has caught up. A
   * rebuild of the same version beside a serving build (`svc projections rebuild`) is
   * reported, not failed: the live one still answers correctly.
   */
  async projectionsServing(): Promise<HealthIndicatorResult> {
    const check = this.indicators.check('projections');
    const { items } = await this.projections.status();
    const bound = this.settings.readyMaxLagSeconds;
    const problems = items
      .map((p) =>
        !p.build
          ? `${p.name} has no serving build`
          : p.stalled_since
            ? `${p.name} is stalled since ${p.stalled_since}: ${p.error?.message}`
            : p.lag_seconds > bound
              ? `${p.name} is ${behind(p.lag_seconds)}`
              : p.version !== this.projections.versionOf(p.name) && (!p.rebuilding || p.rebuilding.lag_seconds > bound)
                ? `${p.name} serves version ${p.version}; version ${this.projections.versionOf(p.name)} is ${p.rebuilding ? behind(p.rebuilding.lag_seconds) : 'not built yet'}`
                : null,
      )
      .filter((problem): problem is string => problem !== null);
    if (problems.length) return check.down({ message: problems.join('; ') });
    const rebuilding = items.filter((p) => p.rebuilding).map((p) => `${p.name} (${behind(p.rebuilding!.lag_seconds)})`);
    return rebuilding.length ? check.up({ rebuilding }) : check.up();
  }
}

/** "12 s behind": whole seconds are what an operator reads; status has the exact figure. */
function behind(lagSeconds: number): string {
  return `${Math.floor(lagSeconds)} s behind`;
}
