import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Mode } from '../platform/mode';
import { buildArtifact, BuiltArtifact, validateArtifact } from './assets/artifact';
import { InvalidArtifactError } from './assets/invalid-artifact';
import { ArtifactStore } from './artifact-store';
import { EngineFailedError, FactoryEngine, LIVE_FACTORY_ENGINE, SANDBOX_FACTORY_ENGINE } from './engines/engine';
import type { JobCommand, JobState } from './job.decider';

type Outcome<T> = { ok: T } | { failed: JobCommand };

/**
 * The worker's part of each stage: what to do with a job sitting in queued, analyzing,
 * planning or generating, as the job decider's next command: what the stage's work found,
 * from the revision the job was at (the decider records it only if the job is still there).
 * Whatever goes wrong in the engine or in building and validating the artifact is about
 * this job: it becomes GenerationJobFailed (the job keeps its stage, with `error`) and never stops the worker
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

  async next(job: JobState, revision: number): Promise<JobCommand | undefined> {
    const at = { from_revision: revision, now: new Date().toISOString() };
    switch (job.stage) {
      case 'queued':
        return { type: 'StartAnalysis', ...at };
      case 'analyzing': {
        const analysis = await this.attempt(job, at, () => this.engine(job.mode).analyze(job.prompt));
        if ('failed' in analysis) return analysis.failed;
        return { type: 'RecordAnalysis', ...at, questions: analysis.ok.questions };
      }
      case 'planning': {
        const plan = await this.attempt(job, at, () => this.engine(job.mode).plan(job.prompt, job.questions, job.answers));
        if ('failed' in plan) return plan.failed;
        return { type: 'RecordPlan', ...at, plan: plan.ok };
      }
      case 'generating': {
        const plan = job.plan!;
        const built = await this.attempt<BuiltArtifact>(job, at, async () => {
          const artifact = buildArtifact(plan);
          await validateArtifact(plan, artifact);
          return artifact;
        });
        if ('failed' in built) return built.failed;
        // Only now: nothing is stored for a build that failed validation.
        return { type: 'CompleteBuild', ...at, artifact: await this.artifacts.store(job, built.ok) };
      }
      default:
        return undefined;
    }
  }

  private async attempt<T>(job: JobState, at: { from_revision: number; now: string }, work: () => Promise<T>): Promise<Outcome<T>> {
    try {
      return { ok: await work() };
    } catch (error) {
      const known = error instanceof EngineFailedError || error instanceof InvalidArtifactError;
      // An error of another kind is a bug of ours (a rule, a builder): logged with its stack, still only this job's.
      if (known) this.logger.warn(`job ${job.id} failed in ${job.stage}: ${(error as Error).message}`);
      else this.logger.error(`job ${job.id} failed in ${job.stage}: ${(error as Error).stack ?? error}`);
      const code = job.stage === 'generating' ? 'artifact_invalid' : 'engine_failed';
      const message = known ? (error as Error).message : `The ${job.stage === 'generating' ? 'build' : `${this.engine(job.mode).name} engine`} failed unexpectedly: ${(error as Error).message}`;
      return { failed: { type: 'FailStage', ...at, error: { code, message } } };
    }
  }
}
