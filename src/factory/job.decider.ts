/**
 * A generation job as a pure decider (initialState / evolve / decide) on its stream
 * job-<mode>-<job_id>: no I/O, no clock. What needs I/O happens before a command is made
 * (the engine's analysis and plan, the stored artifact, the listing a publish created) and
 * the command carries it, with `now`. The factory_jobs read model folds the same evolveJob.
 */
import type { Decider } from '../event-store/stream-commands';
import { ConcurrencyConflict, Errors } from '../platform/errors';
import type { Mode } from '../platform/mode';
import type { AssetPlan } from './assets/plan';
import { draftFor } from './draft';
import type { Answer, Question } from './engines/engine';
import type {
  GenerationJobAnalysisStarted,
  GenerationJobApproved,
  GenerationJobClarified,
  GenerationJobCompleted,
  GenerationJobCreated,
  GenerationJobFailed,
  GenerationJobPlanned,
  GenerationJobPlanningStarted,
  GenerationJobPublished,
  GenerationJobQuestionsAsked,
  GenerationJobRebuildRequested,
  GenerationJobReplanRequested,
  JobArtifact,
  JobDraft,
} from './events';

/** Stages in pipeline order (spec part 3); the moves between them are decisions section 7's. */
export type Stage = 'queued' | 'analyzing' | 'awaiting_clarification' | 'planning' | 'awaiting_approval' | 'generating' | 'review' | 'published';

/** The stages the worker moves a job out of; the others wait for the creator. */
export const WORKER_STAGES: readonly Stage[] = ['queued', 'analyzing', 'planning', 'generating'];

export interface JobState {
  id: string;
  account_id: string;
  mode: Mode;
  stage: Stage;
  prompt: string;
  questions: Question[];
  answers: Answer[];
  plan: AssetPlan | null;
  draft: JobDraft | null;
  artifact: JobArtifact | null;
  listing: Record<string, unknown> | null;
  credits_spent: number;
  error: { code: string; message: string; stage: string } | null;
  /** The build in progress or last finished (0 before the first approve). */
  build: number;
  /** Whether a credit stands behind the current build (refunded when it fails). */
  build_paid: boolean;
  created_at: string;
  updated_at: string;
}

/** The events of a job stream (JOB_EVENT_TYPES), with their data as stored. */
export type JobEvent =
  | { type: 'GenerationJobCreated'; data: GenerationJobCreated }
  | { type: 'GenerationJobAnalysisStarted'; data: GenerationJobAnalysisStarted }
  | { type: 'GenerationJobQuestionsAsked'; data: GenerationJobQuestionsAsked }
  | { type: 'GenerationJobPlanningStarted'; data: GenerationJobPlanningStarted }
  | { type: 'GenerationJobClarified'; data: GenerationJobClarified }
  | { type: 'GenerationJobReplanRequested'; data: GenerationJobReplanRequested }
  | { type: 'GenerationJobPlanned'; data: GenerationJobPlanned }
  | { type: 'GenerationJobApproved'; data: GenerationJobApproved }
  | { type: 'GenerationJobRebuildRequested'; data: GenerationJobRebuildRequested }
  | { type: 'GenerationJobCompleted'; data: GenerationJobCompleted }
  | { type: 'GenerationJobFailed'; data: GenerationJobFailed }
  | { type: 'GenerationJobPublished'; data: GenerationJobPublished };

/** Folds one job event into the job; undefined in, Created out. */
export function evolveJob(state: JobState | undefined, event: JobEvent): JobState | undefined {
  if (event.type === 'GenerationJobCreated') {
    const e = event.data;
    return {
      id: e.job_id, account_id: e.account_id, mode: e.mode, stage: 'queued', prompt: e.prompt,
      questions: [], answers: [], plan: null, draft: null, artifact: null, listing: null,
      credits_spent: 1, error: null, build: 0, build_paid: false, created_at: e.at, updated_at: e.at,
    };
  }
  if (!state) return state;
  // Every job event carries its time (`??`: a stored event of a type this fold does not know may not).
  const s: JobState = { ...state, updated_at: event.data.at ?? state.updated_at };
  switch (event.type) {
    case 'GenerationJobAnalysisStarted':
      return { ...s, stage: 'analyzing', error: null };
    case 'GenerationJobQuestionsAsked':
      return { ...s, stage: 'awaiting_clarification', questions: event.data.questions };
    case 'GenerationJobPlanningStarted':
      return { ...s, stage: 'planning' };
    case 'GenerationJobClarified':
      return { ...s, stage: 'planning', answers: event.data.answers };
    case 'GenerationJobReplanRequested':
      return { ...s, stage: 'planning', error: null };
    case 'GenerationJobPlanned':
      return { ...s, stage: 'awaiting_approval', plan: event.data.plan };
    case 'GenerationJobApproved':
      return { ...s, stage: 'generating', build: event.data.build, build_paid: event.data.paid, error: null };
    case 'GenerationJobRebuildRequested':
      return { ...s, stage: 'generating', build: event.data.build, build_paid: true, credits_spent: s.credits_spent + 1, error: null };
    case 'GenerationJobCompleted':
      return { ...s, stage: 'review', artifact: event.data.artifact, draft: event.data.draft };
    case 'GenerationJobFailed': {
      const d = event.data;
      // The credit of a failed paid build goes back (CreditsRefunded on the credits stream).
      const refunded = d.stage === 'generating' && s.build_paid;
      return { ...s, error: { ...d.error, stage: d.stage }, credits_spent: s.credits_spent - (refunded ? 1 : 0), build_paid: refunded ? false : s.build_paid };
    }
    case 'GenerationJobPublished':
      return { ...s, stage: 'published', listing: event.data.listing };
    default:
      return s;
  }
}

/** The stream as its decider sees it: the job, its revision, and the builds a paid rebuild started. */
export interface JobStreamState {
  job: JobState | undefined;
  /** Revision of the stream's last event (-1: none): moves made on a job as it was check it. */
  revision: number;
  /** The builds a paid rebuild started (GenerationJobRebuildRequested). */
  rebuilds: number[];
}

export function initialState(): JobStreamState {
  return { job: undefined, revision: -1, rebuilds: [] };
}

export function evolve(state: JobStreamState, event: JobEvent): JobStreamState {
  return {
    job: evolveJob(state.job, event),
    revision: state.revision + 1,
    rebuilds: event.type === 'GenerationJobRebuildRequested' ? [...state.rebuilds, event.data.build] : state.rebuilds,
  };
}

interface Moved {
  /** The revision the move was worked out on (the engine's answer, the spend, the listing): made only if the job is still there. */
  from_revision: number;
  now: string;
}

interface Own {
  /** The caller: another account's job is 404 like a missing one. */
  account_id: string;
  now: string;
}

export type JobCommand =
  /** From the creation's credit spend (which carries the prompt); a repeat records nothing. */
  | { type: 'Create'; job_id: string; account_id: string; mode: Mode; prompt: string; now: string }
  // The worker's moves, each with what its stage's work found.
  | (Moved & { type: 'StartAnalysis' })
  | (Moved & { type: 'RecordAnalysis'; questions: Question[] })
  | (Moved & { type: 'RecordPlan'; plan: AssetPlan })
  | (Moved & { type: 'CompleteBuild'; artifact: JobArtifact })
  /** The stage's work failed: the job keeps its stage with `error`, for regenerate. */
  | (Moved & { type: 'FailStage'; error: { code: string; message: string } })
  // The creator's.
  | (Own & { type: 'Clarify'; answers: Answer[] })
  | (Own & { type: 'Approve' })
  | (Own & { type: 'RequestReplan' })
  /** The listing made from the job in review at from_revision. */
  | (Own & Moved & { type: 'Publish'; listing: Record<string, unknown> })
  /** A paid rebuild (its credit spent for `build` at from_revision): started once, and only from where it was paid for. */
  | (Moved & { type: 'StartRebuild'; build: number });

/**
 * The job moved on from the revision a move was worked out on: the move is not made. The
 * worker leaves the job to the later event, a rebuild's credit goes back, and a request
 * hears 409 conflict, as from any lost race.
 */
export class JobMovedOn extends ConcurrencyConflict {
  constructor(readonly from: number, readonly revision: number) {
    super(`the job moved on from revision ${from} (it is at ${revision})`);
  }
}

/** 400 invalid_request naming the current stage (decisions section 7). */
export function wrongStage(state: JobState, operation: string, allowed: string): never {
  throw Errors.invalidRequest(`This job is in stage "${state.stage}"${state.error ? ' (failed)' : ''}; ${operation} is only possible in ${allowed}.`);
}

/**
 * Where regenerate may start. Beyond the table: a stage that failed (error set) can be
 * retried from its own stage, plan from analyzing/planning and build from generating, since
 * a failed stage stays put for regenerate.
 */
export function canRegenerate(s: JobState, stage: 'plan' | 'build'): boolean {
  if (stage === 'plan') return s.stage === 'awaiting_approval' || s.stage === 'review' || (!!s.error && (s.stage === 'analyzing' || s.stage === 'planning'));
  return s.stage === 'review' || (!!s.error && s.stage === 'generating');
}

/** Publish takes a job in review with its draft and artifact (checked before its listing is made, and again when recorded). */
export function assertPublishable(state: JobState): asserts state is JobState & { draft: JobDraft; artifact: JobArtifact } {
  if (state.stage !== 'review' || !state.draft || !state.artifact) wrongStage(state, 'publish', '"review"');
}

/** The events a command records; [] for a repeat (a second creation, a rebuild already started). */
export function decide(command: JobCommand, state: JobStreamState): JobEvent[] {
  const job = state.job;
  switch (command.type) {
    case 'Create': {
      if (job) return [];
      const created: GenerationJobCreated = { job_id: command.job_id, account_id: command.account_id, mode: command.mode, prompt: command.prompt, at: command.now };
      return [{ type: 'GenerationJobCreated', data: created }];
    }
    case 'StartRebuild': {
      if (!job || state.rebuilds.includes(command.build)) return [];
      if (state.revision !== command.from_revision) throw new JobMovedOn(command.from_revision, state.revision);
      const requested: GenerationJobRebuildRequested = { job_id: job.id, account_id: job.account_id, mode: job.mode, build: command.build, at: command.now };
      return [{ type: 'GenerationJobRebuildRequested', data: requested }];
    }
    case 'StartAnalysis':
    case 'RecordAnalysis':
    case 'RecordPlan':
    case 'CompleteBuild':
    case 'FailStage': {
      if (!job || state.revision !== command.from_revision) throw new JobMovedOn(command.from_revision, state.revision);
      return [workerMove(command, job)];
    }
  }
  if (job?.account_id !== command.account_id) throw Errors.notFound('factory job');
  const fact = { job_id: job.id, account_id: job.account_id, mode: job.mode };
  switch (command.type) {
    case 'Clarify': {
      if (job.stage !== 'awaiting_clarification') wrongStage(job, 'clarify', '"awaiting_clarification"');
      const asked = new Set(job.questions.map((q) => q.id));
      const unknown = command.answers.find((a) => !asked.has(a.id));
      if (unknown) throw Errors.validationFailed(`Invalid field "answers": "${unknown.id.slice(0, 64)}" is not a question of this job (${[...asked].join(', ')}).`);
      const given = new Set(command.answers.map((a) => a.id));
      if (given.size !== command.answers.length) throw Errors.validationFailed('Invalid field "answers": a question is answered twice.');
      const missing = job.questions.find((q) => !given.has(q.id));
      if (missing) throw Errors.validationFailed(`Invalid field "answers": question "${missing.id}" has no answer.`);
      const clarified: GenerationJobClarified = { ...fact, answers: command.answers.map(({ id, answer }) => ({ id, answer })), at: command.now };
      return [{ type: 'GenerationJobClarified', data: clarified }];
    }
    case 'Approve': {
      if (job.stage !== 'awaiting_approval') wrongStage(job, 'approve', '"awaiting_approval"');
      // Only the first build is the one paid for at creation: its failure gives the credit back.
      const approved: GenerationJobApproved = { ...fact, build: job.build + 1, paid: job.build === 0, at: command.now };
      return [{ type: 'GenerationJobApproved', data: approved }];
    }
    case 'RequestReplan': {
      if (!canRegenerate(job, 'plan')) wrongStage(job, 'regenerate?stage=plan', '"awaiting_approval" or "review" (or a failed analysis or plan)');
      const replan: GenerationJobReplanRequested = { ...fact, at: command.now };
      return [{ type: 'GenerationJobReplanRequested', data: replan }];
    }
    case 'Publish': {
      // The listing was made from the job as it was then: a job that moved since is a lost race.
      if (state.revision !== command.from_revision) throw new JobMovedOn(command.from_revision, state.revision);
      assertPublishable(job);
      const published: GenerationJobPublished = { ...fact, listing: command.listing, job: {}, at: command.now };
      published.job = toPublicJob(evolveJob(job, { type: 'GenerationJobPublished', data: published })!);
      return [{ type: 'GenerationJobPublished', data: published }];
    }
  }
}

/** What the worker's stage work found, as the job's next event. */
function workerMove(command: Extract<JobCommand, { type: 'StartAnalysis' | 'RecordAnalysis' | 'RecordPlan' | 'CompleteBuild' | 'FailStage' }>, job: JobState): JobEvent {
  const fact = { job_id: job.id, account_id: job.account_id, mode: job.mode, at: command.now };
  switch (command.type) {
    case 'StartAnalysis':
      return { type: 'GenerationJobAnalysisStarted', data: fact };
    case 'RecordAnalysis':
      return command.questions.length ? { type: 'GenerationJobQuestionsAsked', data: { ...fact, questions: command.questions } } : { type: 'GenerationJobPlanningStarted', data: fact };
    case 'RecordPlan':
      return { type: 'GenerationJobPlanned', data: { ...fact, plan: command.plan } };
    case 'CompleteBuild': {
      const completed: GenerationJobCompleted = { ...fact, build: job.build, artifact: command.artifact, draft: draftFor(job.plan!), job: {} };
      completed.job = toPublicJob(evolveJob(job, { type: 'GenerationJobCompleted', data: completed })!);
      return { type: 'GenerationJobCompleted', data: completed };
    }
    case 'FailStage': {
      const failed: GenerationJobFailed = { ...fact, stage: job.stage, error: command.error, ...(job.stage === 'generating' ? { build: job.build } : {}) };
      return { type: 'GenerationJobFailed', data: failed };
    }
  }
}

export const jobDecider: Decider<JobCommand, JobEvent, JobStreamState> = { initialState, evolve, decide };

/** The job object of decisions section 7. */
export function toPublicJob(s: JobState) {
  return {
    id: s.id,
    object: 'factory_job' as const,
    stage: s.stage,
    prompt: s.prompt,
    questions: s.questions,
    answers: s.answers,
    plan: s.plan,
    draft: s.draft,
    artifact: s.artifact,
    listing: s.listing,
    credits_spent: s.credits_spent,
    error: s.error,
    created_at: s.created_at,
    updated_at: s.updated_at,
  };
}

export type PublicJob = ReturnType<typeof toPublicJob>;
