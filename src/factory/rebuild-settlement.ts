import { Injectable } from '@nestjs/common';
import { Credits } from './credits';
import type { CreditsSpent } from './events';
import { JobMovedOn } from './job.decider';
import { JobStreams } from './job-streams';

/**
 * regenerate?stage=build spends a credit, then moves the job from the revision it was
 * spent for. Like creation, the spend is recorded first and this settles it: the move is
 * made if the job is still where the spend found it, the credit refunded if the job moved
 * on meanwhile. The request settles at once, the worker again after a crash; both are safe
 * to repeat (the job decider starts a build once, the refund is one per build).
 */
@Injectable()
export class RebuildSettlement {
  constructor(
    private readonly jobs: JobStreams,
    private readonly credits: Credits,
  ) {}

  /** True when the rebuild is (now or already) under way, false when its credit went back. */
  async settle(spend: CreditsSpent): Promise<boolean> {
    if (spend.job_revision === undefined) return true;
    try {
      await this.jobs.handle(spend.mode, spend.job_id, { type: 'StartRebuild', build: spend.build, from_revision: spend.job_revision, now: new Date().toISOString() });
      return true;
    } catch (error) {
      if (!(error instanceof JobMovedOn)) throw error;
    }
    await this.credits.refund(spend.mode, spend.account_id, spend.job_id, spend.build, 'the job moved on before the rebuild could start');
    return false;
  }
}
