import { Injectable } from '@nestjs/common';
import type { StreamCommands } from '../event-store/stream-commands';
import type { AuthContext } from '../platform/auth/auth-context';
import { Errors } from '../platform/errors';
import type { Mode } from '../platform/mode';
import { Streams } from '../platform/streams';
import { EventWriter } from '../projection-runner/event-writer';
import { ProjectionRunner } from '../projection-runner/projection-runner';
import { JobCommand, jobDecider, JobEvent, JobState, JobStreamState } from './job.decider';
import { FACTORY_JOBS_READ_MODEL } from './job-queries';

export interface LoadedJob {
  state: JobState;
  /** Revision of the stream's last event: where a move worked out on this state is made from. */
  revision: number;
  /** The builds a paid rebuild started (GenerationJobRebuildRequested), read with the revision in one read. */
  rebuilds: number[];
}

/** A job after a command, and what the command recorded on it. */
export interface HandledJob {
  /** Undefined only for a job that does not exist, on which the command recorded nothing. */
  job: LoadedJob | undefined;
  recorded: JobEvent[];
}

/** Job ids are ours (newId('job')): anything else names no job, and no stream name is built from it. */
const JOB_ID = /^job_[A-Za-z0-9]{24}$/;

/** Ids are opaque (spec section 1): one that cannot be a job names nothing, 404 like an unknown one. */
export function assertJobId(id: string): void {
  if (!JOB_ID.test(id)) throw Errors.notFound('factory job');
}

/** Job streams (job-<mode>-<id>) and the job decider run on them; commands and the worker decide on these, never on the read model. */
@Injectable()
export class JobStreams {
  private readonly commands: StreamCommands<JobCommand, JobEvent, JobStreamState>;

  constructor(
    writer: EventWriter,
    private readonly projections: ProjectionRunner,
  ) {
    this.commands = writer.commands(jobDecider);
  }

  async load(mode: Mode, jobId: string): Promise<LoadedJob | undefined> {
    const { state } = await this.commands.load(Streams.job(mode, jobId));
    return loadedJob(state);
  }

  /**
   * The job as a request answers it, once GET would read the same: for moves the request
   * did not append itself (the worker created the job from its spend, or settled its
   * rebuild, first), so the append's own read-your-writes wait did not happen.
   */
  async loadReadable(mode: Mode, jobId: string): Promise<LoadedJob | undefined> {
    const { state, position } = await this.commands.load(Streams.job(mode, jobId));
    if (!state.job || !position) return undefined;
    await this.projections.waitFor(position, { projections: [FACTORY_JOBS_READ_MODEL] });
    return loadedJob(state);
  }

  /** The caller's own job in the key's mode; another account's job is 404 like a missing one. */
  async loadOwn(auth: AuthContext, jobId: string): Promise<LoadedJob> {
    assertJobId(jobId);
    const job = await this.load(auth.mode, jobId);
    if (!job || job.state.account_id !== auth.accountId) throw Errors.notFound('factory job');
    return job;
  }

  /** Decides a command on the job's stream: appended at the revision it was decided on, a lost race decided again. */
  async handle(mode: Mode, jobId: string, command: JobCommand): Promise<HandledJob> {
    const handled = await this.commands.handle(Streams.job(mode, jobId), command);
    return { job: loadedJob(handled.state), recorded: handled.recorded };
  }

  /** A command of the caller on their own job (the decider answers 404 for another account's) and the job after it. */
  async handleOwn(auth: AuthContext, jobId: string, command: JobCommand): Promise<JobState> {
    assertJobId(jobId);
    const { job } = await this.handle(auth.mode, jobId, command);
    return job!.state;
  }
}

function loadedJob(state: JobStreamState): LoadedJob | undefined {
  return state.job && { state: state.job, revision: state.revision, rebuilds: state.rebuilds };
}
