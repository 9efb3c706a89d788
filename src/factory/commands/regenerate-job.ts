import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { AuthContext } from '../../platform/auth/auth-context';
import { Errors } from '../../platform/errors';
import { Credits } from '../credits';
import { canRegenerate, PublicJob, toPublicJob, wrongStage } from '../job.decider';
import { JobStreams } from '../job-streams';
import { RebuildSettlement } from '../rebuild-settlement';

/** regenerate?stage=plan (free) or build (one credit). */
export class RegenerateGenerationJobCommand extends Command<PublicJob> {
  constructor(readonly auth: AuthContext, readonly jobId: string, readonly stage: 'plan' | 'build') {
    super();
  }
}

@CommandHandler(RegenerateGenerationJobCommand)
export class RegenerateGenerationJobHandler implements ICommandHandler<RegenerateGenerationJobCommand> {
  constructor(
    private readonly jobs: JobStreams,
    private readonly credits: Credits,
    private readonly settlement: RebuildSettlement,
  ) {}

  async execute({ auth, jobId, stage }: RegenerateGenerationJobCommand): Promise<PublicJob> {
    if (stage === 'plan') return toPublicJob(await this.jobs.handleOwn(auth, jobId, { type: 'RequestReplan', account_id: auth.accountId, now: new Date().toISOString() }));
    // The credit is spent first (on its own stream), then the settlement moves the job if it is still where the credit was spent for.
    const job = await this.jobs.loadOwn(auth, jobId);
    if (!canRegenerate(job.state, 'build')) wrongStage(job.state, 'regenerate?stage=build', '"review" (or a failed build)');
    const spend = await this.credits.spend(auth.mode, auth.accountId, { job_id: job.state.id, build: job.state.build + 1, job_revision: job.revision });
    if (!(await this.settlement.settle(spend))) throw Errors.conflict('The job changed while the rebuild was being paid for; the credit was given back. Retry the request.');
    return toPublicJob((await this.jobs.loadReadable(auth.mode, jobId))!.state);
  }
}
