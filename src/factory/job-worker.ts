import { Injectable } from '@nestjs/common';
import type { RecordedEvent } from '../event-store/event-store';
import { ConcurrencyConflict } from '../platform/errors';
import { EventWriter } from '../projection-runner/event-writer';
import { ProjectionRunner } from '../projection-runner/projection-runner';
import { Credits } from './credits';
import { CreditsSpent, FactoryEvents, GenerationJobFailed, JOB_EVENT_TYPES } from './events';
import { WORKER_STAGES } from './job.decider';
import { JobCreation } from './job-creation';
import { HandledJob, LoadedJob, JobStreams } from './job-streams';
import { JobSteps } from './job-steps';
import { RebuildSettlement } from './rebuild-settlement';

/** Its row in projection_checkpoints; like fulfilment, a subscriber that is never rebuilt. */
export const FACTORY_WORKER_CHECKPOINT = 'subscriber:factory_jobs';

const BATCH_SIZE = 50;

/**
 * The generation pipeline: a checkpointed subscriber over the event log (not the in-memory
 * EventBus, not a timer over a table). An event that leaves a job in a worker stage is
 * acted on only while it is still the job's last event; the worker then moves the job as
 * far as it can go on its own, each move appended with the expected revision, so two
 * workers (or a worker and a request) never both make the same move. The checkpoint passes
 * an event only after its moves are stored: a worker that dies mid-stage replays the event
 * on restart and finds the job where it was left (a build is stored at a fixed key, so a
 * replayed build leaves one artifact).
 *
 * It also finishes what a request may have left half done across two streams: a credit
 * spent for a job not yet created (JobCreation), a rebuild paid but not started
 * (RebuildSettlement), a failed paid build not yet refunded.
 */
@Injectable()
export class JobWorker {
  constructor(
    private readonly projections: ProjectionRunner,
    private readonly writer: EventWriter,
    private readonly jobs: JobStreams,
    private readonly steps: JobSteps,
    private readonly credits: Credits,
    private readonly creation: JobCreation,
    private readonly settlement: RebuildSettlement,
  ) {}

  start(): Promise<void> {
    return this.projections.subscribe({
      name: FACTORY_WORKER_CHECKPOINT,
      batchSize: BATCH_SIZE,
      // Credits ride on these events: a job that cannot be moved stops the worker loudly
      // rather than being skipped (an engine's failure is not this: it is recorded on the job).
      whenFailing: 'stop',
      types: [...JOB_EVENT_TYPES, FactoryEvents.CreditsSpent],
      apply: async () => undefined,
      before: (events) =>
        this.writer.gatheringWaits(async () => {
          for (const event of events) await this.handle(event);
        }),
    });
  }

  stop(): Promise<void> {
    return this.projections.unsubscribe(FACTORY_WORKER_CHECKPOINT);
  }

  /** One event as the subscription hands it over; safe to run twice at once (tests race two "workers" through it). */
  async handle(event: RecordedEvent): Promise<void> {
    if (event.type === FactoryEvents.CreditsSpent) {
      const spend = event.data as CreditsSpent;
      await this.creation.fromSpend(spend);
      await this.settlement.settle(spend);
      return;
    }
    if (event.type === FactoryEvents.GenerationJobFailed) await this.refundFailedBuild(event.data as GenerationJobFailed);
    const job = await this.jobs.load(event.data.mode, event.data.job_id);
    // Moved on since (by this worker's own chain of moves, or by a request): the later event drives it.
    if (!job || job.revision !== event.revision) return;
    await this.advance(job);
  }

  private async advance(job: LoadedJob | undefined): Promise<void> {
    while (job && WORKER_STAGES.includes(job.state.stage) && !job.state.error) {
      const command = await this.steps.next(job.state, job.revision);
      if (!command) return;
      let moved: HandledJob;
      try {
        moved = await this.jobs.handle(job.state.mode, job.state.id, command);
      } catch (error) {
        // Moved on meanwhile (another worker, or a request; JobMovedOn is one): the later event drives it.
        if (error instanceof ConcurrencyConflict) return;
        throw error;
      }
      job = moved.job;
      for (const e of moved.recorded) if (e.type === 'GenerationJobFailed') await this.refundFailedBuild(e.data);
    }
  }

  /** One refund per job and build, and only for a build a credit was spent on (Credits.refund). */
  private async refundFailedBuild(failed: GenerationJobFailed): Promise<void> {
    if (failed.stage !== 'generating' || failed.build === undefined) return;
    await this.credits.refund(failed.mode, failed.account_id, failed.job_id, failed.build, `build ${failed.build} failed: ${failed.error.code}`);
  }
}
