import { Injectable } from '@nestjs/common';
import { WrongExpectedRevisionError } from '../event-store/event-store';
import { Credits } from './credits';
import type { CreditsSpent, GenerationJobRebuildRequested } from './events';
import { FactoryEvents } from './events';
import { JobStreams } from './job-streams';

/**
 * regenerate?stage=build spends a credit, then moves the job from the revision it was
 * spent for. Like creation, the spend is recorded first and this settles it: the move is
 * made if the job is still where the spend found it, the credit refunded if the job moved
 * on meanwhile. The request settles at once, the worker again after a crash; both are safe
 * to repeat (the move is expected-revision, the refund one per build).
 */
@Injectable()
export class RebuildSettlement {
  constructor(
    private readonly jobs: JobStreams,
    private readonly credits: Credits,
  ) {}

  /**
   * True when the rebuild is (now or already) under way, false when its credit went back.
   * The job is read once per decision: a RebuildRequested can only be the event right after
   * the spend's revision, so a job seen past that revision without one never gets one.
   */
  async settle(spend: CreditsSpent): Promise<boolean> {
    if (spend.job_revision === undefined) return true;
    let job = await this.jobs.load(spend.mode, spend.job_id);
    if (!job || job.rebuilds.includes(spend.build)) return true;
    if (job.revision === spend.job_revision) {
      const requested: GenerationJobRebuildRequested = { job_id: spend.job_id, account_id: spend.account_id, mode: spend.mode, build: spend.build, at: new Date().toISOString() };
      try {
        await this.jobs.append(job, [{ type: FactoryEvents.GenerationJobRebuildRequested, data: { ...requested } }]);
        return true;
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
        // Lost to another settler of the same spend (the worker, or this request), or the job moved.
        job = await this.jobs.load(spend.mode, spend.job_id);
        if (job?.rebuilds.includes(spend.build)) return true;
      }
    }
    await this.credits.refund(spend.mode, spend.account_id, spend.job_id, spend.build, 'the job moved on before the rebuild could start');
    return false;
  }
}
