import type { Mode } from '../platform/mode';
import { Errors } from '../platform/errors';
import type { AssetPlan } from './assets/plan';
import type { Answer, Question } from './engines/engine';
import type * as E from './events';
import { FactoryEvents } from './events';

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
  draft: E.JobDraft | null;
  artifact: E.JobArtifact | null;
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

export interface JobEvent {
  type: string;
  data: any;
}

/** Folds one job event into the state; undefined in, Created out. Pure. */
export function evolve(state: JobState | undefined, event: JobEvent): JobState | undefined {
  const d = event.data;
  if (event.type === FactoryEvents.GenerationJobCreated) {
    const e = d as E.GenerationJobCreated;
    return {
      id: e.job_id, account_id: e.account_id, mode: e.mode, stage: 'queued', prompt: e.prompt,
      questions: [], answers: [], plan: null, draft: null, artifact: null, listing: null,
      credits_spent: 1, error: null, build: 0, build_paid: false, created_at: e.at, updated_at: e.at,
    };
  }
  if (!state) return state;
  const s: JobState = { ...state, updated_at: d.at ?? state.updated_at };
  switch (event.type) {
    case FactoryEvents.GenerationJobAnalysisStarted:
      return { ...s, stage: 'analyzing', error: null };
    case FactoryEvents.GenerationJobQuestionsAsked:
      return { ...s, stage: 'awaiting_clarification', questions: d.questions };
    case FactoryEvents.GenerationJobPlanningStarted:
      return { ...s, stage: 'planning' };
    case FactoryEvents.GenerationJobClarified:
      return { ...s, stage: 'planning', answers: d.answers };
    case FactoryEvents.GenerationJobReplanRequested:
      return { ...s, stage: 'planning', error: null };
    case FactoryEvents.GenerationJobPlanned:
      return { ...s, stage: 'awaiting_approval', plan: d.plan };
    case FactoryEvents.GenerationJobApproved:
      return { ...s, stage: 'generating', build: d.build, build_paid: d.paid, error: null };
    case FactoryEvents.GenerationJobRebuildRequested:
      return { ...s, stage: 'generating', build: d.build, build_paid: true, credits_spent: s.credits_spent + 1, error: null };
    case FactoryEvents.GenerationJobCompleted:
      return { ...s, stage: 'review', artifact: d.artifact, draft: d.draft };
    case FactoryEvents.GenerationJobFailed: {
      // The credit of a failed paid build goes back (CreditsRefunded on the credits stream).
      const refunded = d.stage === 'generating' && s.build_paid;
      return { ...s, error: { ...d.error, stage: d.stage }, credits_spent: s.credits_spent - (refunded ? 1 : 0), build_paid: refunded ? false : s.build_paid };
    }
    case FactoryEvents.GenerationJobPublished:
      return { ...s, stage: 'published', listing: d.listing };
    default:
      return s;
  }
}

export function fold(events: readonly JobEvent[]): JobState | undefined {
  return events.reduce<JobState | undefined>(evolve, undefined);
}

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
