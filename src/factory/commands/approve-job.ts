import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { AuthContext } from '../../platform/auth/auth-context';
import { FactoryEvents, GenerationJobApproved } from '../events';
import { PublicJob, toPublicJob, wrongStage } from '../job';
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
    return this.jobs.retryOnConflict(async () => {
      const job = await this.jobs.loadOwn(auth, jobId);
      const { state } = job;
      if (state.stage !== 'awaiting_approval') wrongStage(state, 'approve', '"awaiting_approval"');
      // Only the first build is the one paid for at creation: its failure gives the credit back.
      const approved: GenerationJobApproved = { job_id: state.id, account_id: state.account_id, mode: state.mode, build: state.build + 1, paid: state.build === 0, at: new Date().toISOString() };
      return toPublicJob((await this.jobs.append(job, [{ type: FactoryEvents.GenerationJobApproved, data: { ...approved } }])).state);
    });
  }
}
