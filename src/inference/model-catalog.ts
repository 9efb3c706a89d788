/** One public inference model: what callers name in `model`, and what it costs by default. */
export interface InferenceModel {
  readonly id: string;
  /** Tokens of prompt and completion together; `max_tokens` above it is refused. */
  readonly contextWindow: number;
  /** Until an operator sets a price (`svc inference price`), calls are charged at this one. */
  readonly defaultPrice: Price;
  /** Unix seconds the model entered the catalog: OpenAI's `created` of a model object. */
  readonly created: number;
}

/** USD per million tokens, as OpenAI and its peers publish prices. */
export interface Price {
  readonly input_usd_per_million: number;
  readonly output_usd_per_million: number;
}

/** The models of spec part 4; the upstream model serving each is configuration (INFERENCE_UPSTREAM_MODELS). */
export const INFERENCE_MODELS: readonly InferenceModel[] = [
  // created: 2026-11-01T00:00:00Z, when both entered the catalog.
  { id: 'svc-reason-70b', contextWindow: 131_072, defaultPrice: { input_usd_per_million: 0.9, output_usd_per_million: 2.7 }, created: 1_793_491_200 },
  { id: 'svc-fast-8b', contextWindow: 131_072, defaultPrice: { input_usd_per_million: 0.1, output_usd_per_million: 0.3 }, created: 1_793_491_200 },
];

export function findModel(id: unknown): InferenceModel | undefined {
  return INFERENCE_MODELS.find((m) => m.id === id);
}

/**
 * Cost in micro-USD, rounded up per call so no call is free: USD per million tokens is
 * exactly micro-USD per token.
 */
export function costMicros(price: Price, promptTokens: number, completionTokens: number): number {
  const exact = promptTokens * price.input_usd_per_million + completionTokens * price.output_usd_per_million;
  // toFixed first: 100 * 0.9 is 90.00000000000001 in floating point, which must stay 90.
  return Math.ceil(Number(exact.toFixed(6)));
}
