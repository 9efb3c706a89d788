import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { AuthContext } from '../../platform/auth/auth-context';
import type { Answer } from '../engines/engine';
import { PublicJob, toPublicJob } from '../job.decider';
import { JobStreams } from '../job-streams';

/** One round of answers, one per question; free text, read (or defaulted) by planning. */
export class ClarifyGenerationJobCommand extends Command<PublicJob> {
  constructor(readonly auth: AuthContext, readonly jobId: string, readonly answers: Answer[]) {
    super();
  }
}

@CommandHandler(ClarifyGenerationJobCommand)
export class ClarifyGenerationJobHandler implements ICommandHandler<ClarifyGenerationJobCommand> {
  constructor(private readonly jobs: JobStreams) {}

  async execute({ auth, jobId, answers }: ClarifyGenerationJobCommand): Promise<PublicJob> {
    return toPublicJob(await this.jobs.handleOwn(auth, jobId, { type: 'Clarify', account_id: auth.accountId, answers, now: new Date().toISOString() }));
  }
}
