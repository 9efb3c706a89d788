import { Injectable } from '@nestjs/common';
import type { CreditsSpent } from './events';
import { JobStreams } from './job-streams';

/**
 * A job and its credit live on two streams and no append spans both. The credit is spent
 * first and the spend carries the prompt, so the spend alone is enough to create the job:
 * the request creates it right after, and the worker creates it from the spend should the
 * request die in between. The job decider creates a job once: a repeat records nothing.
 */
@Injectable()
export class JobCreation {
  constructor(private readonly jobs: JobStreams) {}

  async fromSpend(spend: CreditsSpent): Promise<void> {
    if (spend.build !== 1 || spend.prompt === undefined) return;
    await this.jobs.handle(spend.mode, spend.job_id, { type: 'Create', job_id: spend.job_id, account_id: spend.account_id, mode: spend.mode, prompt: spend.prompt, now: spend.spent_at });
  }
}
