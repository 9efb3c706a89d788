import type { Mode } from '../platform/mode';
import type { Price } from './model-catalog';

/** An operator set a model's price (`svc inference price`); calls started after it pay it. */
export interface InferencePriceSet extends Price {
  model: string;
  set_at: string;
}

/** One chat completion that ran, metered: what usage shows and a later invoice bills. */
export interface InferenceCallMetered {
  call_id: string;
  key_id: string;
  account_id: string;
  mode: Mode;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  /** At the price in force when the call started (kept with the call, so replay needs no price lookup). */
  price: Price;
  cost_micros: number;
  /** Why it ended: stop, length, cancelled (the caller went away) or error (the upstream failed mid-stream). */
  finish_reason: string;
  latency_ms: number;
  started_at: string;
}

export const InferenceEvents = {
  InferencePriceSet: 'InferencePriceSet',
  InferenceCallMetered: 'InferenceCallMetered',
} as const;
