import { Inject, Injectable } from '@nestjs/common';
import { EVENT_STORE, EventStore, ExpectedRevision, NewEvent, RecordedEvent } from '../event-store/event-store';
import type { AuthContext } from '../platform/auth/auth-context';
import { Errors } from '../platform/errors';
import type { Mode } from '../platform/mode';
import { Streams } from '../platform/streams';
import { EventWriter } from '../projection-runner/event-writer';
import { ProjectionRunner } from '../projection-runner/projection-runner';
import { FactoryEvents } from './events';
import { evolve, fold, JobState } from './job';
import { FACTORY_JOBS_READ_MODEL } from './job-queries';

export interface LoadedJob {
  state: JobState;
  /** Revision of the stream's last event: the expected revision of the next move. */
  revision: number;
  /** The builds a paid rebuild started (GenerationJobRebuildRequested), read with the revision in one read. */
  rebuilds: number[];
}


function rebuildsOf(events: readonly RecordedEvent[]): number[] {
  return events.filter((e) => e.type === FactoryEvents.GenerationJobRebuildRequested).map((e) => e.data.build as number);
}

/** Job ids are ours (newId('job')): anything else names no job, and no stream name is built from it. */
const JOB_ID = /^job_[A-Za-z0-9]{24}$/;

/** Ids are opaque (spec section 1): one that cannot be a job names nothing, 404 like an unknown one. */
export function assertJobId(id: string): void {
  if (!JOB_ID.test(id)) throw Errors.notFound('factory job');
}

/** Loads and appends job streams (job-<mode>-<id>); commands and the worker decide on these, never on the read model. */
@Injectable()
export class JobStreams {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly writer: EventWriter,
    private readonly projections: ProjectionRunner,
  ) {}

  async load(mode: Mode, jobId: string): Promise<LoadedJob | undefined> {
    const events = await this.store.readStream(Streams.job(mode, jobId));
    const state = fold(events);
    return state && { state, revision: events[events.length - 1].revision, rebuilds: rebuildsOf(events) };
  }

  /**
   * The job as a request answers it, once GET would read the same: for moves the request
   * did not append itself (the worker created the job from its spend, or settled its
   * rebuild, first), so the append's own read-your-writes wait did not happen.
   */
  async loadReadable(mode: Mode, jobId: string): Promise<LoadedJob | undefined> {
    const events = await this.store.readStream(Streams.job(mode, jobId));
    const state = fold(events);
    if (!state) return undefined;
    const last = events[events.length - 1];
    await this.projections.waitFor(last.position, { projections: [FACTORY_JOBS_READ_MODEL] });
    return { state, revision: last.revision, rebuilds: rebuildsOf(events) };
  }

  /** The caller's own job in the key's mode; another account's job is 404 like a missing one. */
  async loadOwn(auth: AuthContext, jobId: string): Promise<LoadedJob> {
    assertJobId(jobId);
    const job = await this.load(auth.mode, jobId);
    if (!job || job.state.account_id !== auth.accountId) throw Errors.notFound('factory job');
    return job;
  }

  /** Appends moves with the expected revision and returns the state after them. */
  async append(job: LoadedJob, events: NewEvent[], expected: ExpectedRevision = job.revision): Promise<LoadedJob> {
    const result = await this.writer.append(Streams.job(job.state.mode, job.state.id), events, expected);
    const rebuilds = events.filter((e) => e.type === FactoryEvents.GenerationJobRebuildRequested).map((e) => e.data.build as number);
    return { state: events.reduce<JobState>((s, e) => evolve(s, e)!, job.state), revision: result.nextRevision, rebuilds: [...job.rebuilds, ...rebuilds] };
  }

  retryOnConflict<T>(attempt: () => Promise<T>): Promise<T> {
    return this.writer.retryOnConflict(attempt);
  }

  /** The first event of a job: from its creation spend, so the spend alone is enough to create it (see JobCreation). */
  async appendCreated(mode: Mode, jobId: string, event: NewEvent): Promise<void> {
    await this.writer.append(Streams.job(mode, jobId), [event], 'no_stream');
  }
}
