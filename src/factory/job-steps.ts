import { Inject, Injectable, Logger } from '@nestjs/common';
import type { NewEvent } from '../event-store/event-store';
import type { Mode } from '../platform/mode';
import { buildArtifact, BuiltArtifact, validateArtifact } from './assets/artifact';
import { InvalidArtifactError } from './assets/invalid-artifact';
import { ArtifactStore } from './artifact-store';
import { draftFor } from './draft';
import { EngineFailedError, FactoryEngine, LIVE_FACTORY_ENGINE, SANDBOX_FACTORY_ENGINE } from './engines/engine';
import type * as E from './events';
import { FactoryEvents } from './events';
import { evolve, JobState, toPublicJob } from './job';

type Fact = Pick<E.GenerationJobFailed, 'job_id' | 'account_id' | 'mode' | 'at'>;
type Outcome<T> = { ok: T } | { failed: NewEvent };

/**
 * The worker's part of each stage: what to do with a job sitting in queued, analyzing,
 * planning or generating, as the next event(s) to append. Whatever goes wrong in the
 * engine or in building and validating the artifact is about this job: it becomes
 * GenerationJobFailed (the job keeps its stage, with `error`) and never stops the worker
 * for every other job. Only storing the artifact may throw (storage down): the worker
 * then retries the step later.
 */
@Injectable()
export class JobSteps {
  private readonly logger = new Logger('FactoryJobs');

  constructor(
    @Inject(SANDBOX_FACTORY_ENGINE) private readonly sandbox: FactoryEngine,
    @Inject(LIVE_FACTORY_ENGINE) private readonly live: FactoryEngine,
    private readonly artifacts: ArtifactStore,
  ) {}

  /** Test mode drafts with the sandbox, live mode with the upstream (decisions section 7). */
  private engine(mode: Mode): FactoryEngine {
    return mode === 'test' ? this.sandbox : this.live;
  }

  async next(job: JobState): Promise<NewEvent[]> {
    const fact: Fact = { job_id: job.id, account_id: job.account_id, mode: job.mode, at: new Date().toISOString() };
    switch (job.stage) {
      case 'queued':
        return [event(FactoryEvents.GenerationJobAnalysisStarted, fact)];
      case 'analyzing': {
        const analysis = await this.attempt(job, fact, () => this.engine(job.mode).analyze(job.prompt));
        if ('failed' in analysis) return [analysis.failed];
        if (analysis.ok.questions.length) return [event<E.GenerationJobQuestionsAsked>(FactoryEvents.GenerationJobQuestionsAsked, { ...fact, questions: analysis.ok.questions })];
        return [event(FactoryEvents.GenerationJobPlanningStarted, fact)];
      }
      case 'planning': {
        const plan = await this.attempt(job, fact, () => this.engine(job.mode).plan(job.prompt, job.questions, job.answers));
        if ('failed' in plan) return [plan.failed];
        return [event<E.GenerationJobPlanned>(FactoryEvents.GenerationJobPlanned, { ...fact, plan: plan.ok })];
      }
      case 'generating': {
        const plan = job.plan!;
        const built = await this.attempt<BuiltArtifact>(job, fact, async () => {
          const artifact = buildArtifact(plan);
          await validateArtifact(plan, artifact);
          return artifact;
        });
        if ('failed' in built) return [built.failed];
        // Only now: nothing is stored for a build that failed validation.
        const artifact = await this.artifacts.store(job, built.ok);
        const completed: E.GenerationJobCompleted = { ...fact, build: job.build, artifact, draft: draftFor(plan), job: {} };
        completed.job = toPublicJob(evolve(job, { type: FactoryEvents.GenerationJobCompleted, data: completed })!);
        return [event(FactoryEvents.GenerationJobCompleted, completed)];
      }
      default:
        return [];
    }
  }

  private async attempt<T>(job: JobState, fact: Fact, work: () => Promise<T>): Promise<Outcome<T>> {
    try {
      return { ok: await work() };
    } catch (error) {
      const known = error instanceof EngineFailedError || error instanceof InvalidArtifactError;
      // An error of another kind is a bug of ours (a rule, a builder): logged with its stack, still only this job's.
      if (known) this.logger.warn(`job ${job.id} failed in ${job.stage}: ${(error as Error).message}`);
      else this.logger.error(`job ${job.id} failed in ${job.stage}: ${(error as Error).stack ?? error}`);
      const code = job.stage === 'generating' ? 'artifact_invalid' : 'engine_failed';
      const message = known ? (error as Error).message : `The ${job.stage === 'generating' ? 'build' : `${this.engine(job.mode).name} engine`} failed unexpectedly: ${(error as Error).message}`;
      const failed: E.GenerationJobFailed = { ...fact, stage: job.stage, error: { code, message }, ...(job.stage === 'generating' ? { build: job.build } : {}) };
      return { failed: event(FactoryEvents.GenerationJobFailed, failed) };
    }
  }
}

function event<T extends object>(type: string, data: T): NewEvent {
  return { type, data: { ...data } as Record<string, unknown> };
}
