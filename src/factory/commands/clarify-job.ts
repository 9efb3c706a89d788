import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { AuthContext } from '../../platform/auth/auth-context';
import { Errors } from '../../platform/errors';
import type { Answer } from '../engines/engine';
import { FactoryEvents, GenerationJobClarified } from '../events';
import { PublicJob, toPublicJob, wrongStage } from '../job';
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
    return this.jobs.retryOnConflict(async () => {
      const job = await this.jobs.loadOwn(auth, jobId);
      const { state } = job;
      if (state.stage !== 'awaiting_clarification') wrongStage(state, 'clarify', '"awaiting_clarification"');
      const asked = new Set(state.questions.map((q) => q.id));
      const unknown = answers.find((a) => !asked.has(a.id));
      if (unknown) throw Errors.validationFailed(`Invalid field "answers": "${unknown.id.slice(0, 64)}" is not a question of this job (${[...asked].join(', ')}).`);
      const given = new Set(answers.map((a) => a.id));
      if (given.size !== answers.length) throw Errors.validationFailed('Invalid field "answers": a question is answered twice.');
      const missing = state.questions.find((q) => !given.has(q.id));
      if (missing) throw Errors.validationFailed(`Invalid field "answers": question "${missing.id}" has no answer.`);
      const clarified: GenerationJobClarified = { job_id: state.id, account_id: state.account_id, mode: state.mode, answers: answers.map(({ id, answer }) => ({ id, answer })), at: new Date().toISOString() };
      return toPublicJob((await this.jobs.append(job, [{ type: FactoryEvents.GenerationJobClarified, data: { ...clarified } }])).state);
    });
  }
}
