import type { RecordedEvent } from '../event-store/event-store';
import { evolveJob, JobEvent, JobState } from './job.decider';

/**
 * A generation job as the factory_jobs read model folds it from stored events. The job's
 * rules, its fold and its objects are job.decider.ts's.
 */
export type { JobState, PublicJob } from './job.decider';
export { toPublicJob } from './job.decider';

/** The decider's fold of one stored job event; undefined in, Created out. */
export function evolve(state: JobState | undefined, event: Pick<RecordedEvent, 'type' | 'data'>): JobState | undefined {
  // A job stream holds job events only: their types and data are the union's.
  return evolveJob(state, event as JobEvent);
}
