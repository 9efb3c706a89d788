import type { AssetKind, AssetPlan } from '../assets/plan';

export interface Question {
  id: string;
  question: string;
}

export interface Answer {
  id: string;
  answer: string;
}

/** What analysis read from a prompt, and what it must ask before it can plan. */
export interface Analysis {
  /** Undefined when the prompt does not say; then one of the questions asks. */
  kind?: AssetKind;
  questions: Question[];
}

/**
 * The FactoryEngine port: reads a prompt (and free-text answers) into an analysis and a
 * structured plan. Test mode: the deterministic sandbox (rules). Live mode: an
 * OpenAI-compatible model server asked for JSON. Either way the artifact is then built and
 * validated by code from the plan (src/factory/assets), never written by the engine.
 */
export interface FactoryEngine {
  readonly name: 'sandbox' | 'upstream';
  analyze(prompt: string): Promise<Analysis>;
  /**
   * Drafts the plan. Never asks again: what the prompt and answers do not settle falls back
   * to a default written into plan.assumptions ("payload not understood: assumed 1 kg"), so
   * one round of clarify always moves a job on.
   */
  plan(prompt: string, questions: Question[], answers: Answer[]): Promise<AssetPlan>;
}

/** The engine could not give a usable answer (upstream down, not JSON, not a valid plan): the job records it in `error`. */
export class EngineFailedError extends Error {}

export const SANDBOX_FACTORY_ENGINE = Symbol('SandboxFactoryEngine');
export const LIVE_FACTORY_ENGINE = Symbol('LiveFactoryEngine');
