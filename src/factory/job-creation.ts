import { Injectable } from '@nestjs/common';
import { WrongExpectedRevisionError } from '../event-store/event-store';
import type { CreditsSpent, GenerationJobCreated } from './events';
import { FactoryEvents } from './events';
import { JobStreams } from './job-streams';

/**
 * A job and its credit live on two streams and no append spans both. The credit is spent
 * first and the spend carries the prompt, so the spend alone is enough to create the job:
 * the request creates it right after, and the worker creates it from the spend should the
 * request die in between. Created is appended with no_stream, so it happens once.
 */
@Injectable()
export class JobCreation {
  constructor(private readonly jobs: JobStreams) {}

  async fromSpend(spend: CreditsSpent): Promise<void> {
    if (spend.build !== 1 || spend.prompt === undefined) return;
    const created: GenerationJobCreated = { job_id: spend.job_id, account_id: spend.account_id, mode: spend.mode, prompt: spend.prompt, at: spend.spent_at };
    try {
      await this.jobs.appendCreated(spend.mode, spend.job_id, { type: FactoryEvents.GenerationJobCreated, data: { ...created } });
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
    }
  }
}
