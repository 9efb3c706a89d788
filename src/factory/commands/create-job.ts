import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { AuthContext } from '../../platform/auth/auth-context';
import { newId } from '../../platform/ids';
import { Credits } from '../credits';
import { JobCreation } from '../job-creation';
import { PublicJob, toPublicJob } from '../job.decider';
import { JobStreams } from '../job-streams';

/** POST /v1/factory/jobs: spends one credit (the first build) and queues the job. */
export class CreateGenerationJobCommand extends Command<PublicJob> {
  constructor(readonly auth: AuthContext, readonly prompt: string) {
    super();
  }
}

@CommandHandler(CreateGenerationJobCommand)
export class CreateGenerationJobHandler implements ICommandHandler<CreateGenerationJobCommand> {
  constructor(
    private readonly credits: Credits,
    private readonly creation: JobCreation,
    private readonly jobs: JobStreams,
  ) {}

  async execute({ auth, prompt }: CreateGenerationJobCommand): Promise<PublicJob> {
    const jobId = newId('job');
    // The spend is the decision (402 when none is left); creating the job follows from it.
    const spend = await this.credits.spend(auth.mode, auth.accountId, { job_id: jobId, build: 1, prompt });
    await this.creation.fromSpend(spend);
    const job = await this.jobs.loadReadable(auth.mode, jobId);
    return toPublicJob(job!.state);
  }
}
