import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { AuthContext } from '../../platform/auth/auth-context';
import { PublicJob, toPublicJob } from '../job.decider';
import { JobStreams } from '../job-streams';

/** Approves the plan: the job goes to generating. Spends no credit (decisions section 7). */
export class ApproveGenerationJobCommand extends Command<PublicJob> {
  constructor(readonly auth: AuthContext, readonly jobId: string) {
    super();
  }
}

@CommandHandler(ApproveGenerationJobCommand)
export class ApproveGenerationJobHandler implements ICommandHandler<ApproveGenerationJobCommand> {
  constructor(private readonly jobs: JobStreams) {}

  async execute({ auth, jobId }: ApproveGenerationJobCommand): Promise<PublicJob> {
    return toPublicJob(await this.jobs.handleOwn(auth, jobId, { type: 'Approve', account_id: auth.accountId, now: new Date().toISOString() }));
  }
}
