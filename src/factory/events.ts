import type { Mode } from '../platform/mode';
import type { AssetPlan } from './assets/plan';
import type { Answer, Question } from './engines/engine';

/**
 * Events of a generation job (stream job-<mode>-<job_id>) and of generation credits
 * (stream credits-<mode>-<account_id>, shared with CreditsGranted). Every job event carries
 * job_id, account_id and mode, so a projection or the webhook fan-out needs nothing else.
 */
export const FactoryEvents = {
  GenerationJobCreated: 'GenerationJobCreated',
  GenerationJobAnalysisStarted: 'GenerationJobAnalysisStarted',
  GenerationJobQuestionsAsked: 'GenerationJobQuestionsAsked',
  GenerationJobPlanningStarted: 'GenerationJobPlanningStarted',
  GenerationJobClarified: 'GenerationJobClarified',
  GenerationJobReplanRequested: 'GenerationJobReplanRequested',
  GenerationJobPlanned: 'GenerationJobPlanned',
  GenerationJobApproved: 'GenerationJobApproved',
  GenerationJobRebuildRequested: 'GenerationJobRebuildRequested',
  GenerationJobCompleted: 'GenerationJobCompleted',
  GenerationJobFailed: 'GenerationJobFailed',
  GenerationJobPublished: 'GenerationJobPublished',
  CreditsSpent: 'CreditsSpent',
  CreditsRefunded: 'CreditsRefunded',
} as const;

export const JOB_EVENT_TYPES: readonly string[] = Object.values(FactoryEvents).filter((t) => t.startsWith('GenerationJob'));

interface JobFact {
  job_id: string;
  account_id: string;
  mode: Mode;
  at: string;
}

export interface GenerationJobCreated extends JobFact {
  prompt: string;
}
export type GenerationJobAnalysisStarted = JobFact;
export interface GenerationJobQuestionsAsked extends JobFact {
  questions: Question[];
}
export type GenerationJobPlanningStarted = JobFact;
export interface GenerationJobClarified extends JobFact {
  answers: Answer[];
}
export type GenerationJobReplanRequested = JobFact;
export interface GenerationJobPlanned extends JobFact {
  plan: AssetPlan;
}
/** Starts build `build` (1-based). Approving never spends a credit (decisions section 7). */
export interface GenerationJobApproved extends JobFact {
  build: number;
  /** Whether a credit stands behind this build (the first build, paid at creation): refunded if it fails. */
  paid: boolean;
}
/** regenerate?stage=build: the credit is spent on the credits stream first (CreditsSpent with this build). */
export interface GenerationJobRebuildRequested extends JobFact {
  build: number;
}

export interface JobArtifact {
  storage_path: string;
  file_name: string;
  size: number;
  sha256: string;
  /** README.md and manifest.json stored beside a bare model (a package holds its own). */
  companions: { file_name: string; storage_path: string; size: number; sha256: string }[];
}

export interface JobDraft {
  title: string;
  type: string;
  license: string;
  description: string;
  category: string;
  tags: string[];
}

/** Entering review; the fan-out sends it as factory.job.completed { job }. */
export interface GenerationJobCompleted extends JobFact {
  build: number;
  artifact: JobArtifact;
  draft: JobDraft;
  /** The public job object as it reads in review (the webhook payload). */
  job: Record<string, unknown>;
}

/** A stage failed: the job stays in its stage with `error` set, for regenerate. */
export interface GenerationJobFailed extends JobFact {
  stage: string;
  error: { code: string; message: string };
  /** The build that failed (generating only). */
  build?: number;
}

/** The fan-out sends it as factory.job.published { job }. */
export interface GenerationJobPublished extends JobFact {
  listing: Record<string, unknown>;
  job: Record<string, unknown>;
}

/** A credit taken for a job: at creation (build 1) or for regenerate?stage=build. `credits` is the balance after. */
export interface CreditsSpent {
  account_id: string;
  mode: Mode;
  amount: number;
  credits: number;
  job_id: string;
  build: number;
  /** Creation carries the prompt, so the job can be created from the spend alone (see JobCreation). */
  prompt?: string;
  /** regenerate?stage=build: the job revision (in review) the rebuild starts from. */
  job_revision?: number;
  spent_at: string;
}

/** A credit given back: its build failed, or a paid rebuild could not start. One per job and build. */
export interface CreditsRefunded {
  account_id: string;
  mode: Mode;
  amount: number;
  credits: number;
  job_id: string;
  build: number;
  reason: string;
  refunded_at: string;
}
