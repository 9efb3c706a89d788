import type { ChatRequest } from '../chat-request';

export type FinishReason = 'stop' | 'length';

export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** What an engine yields, in order: text deltas, then one finish, then usage if it counts tokens itself. */
export type EngineEvent =
  | { type: 'delta'; text: string }
  | { type: 'finish'; reason: FinishReason }
  | { type: 'usage'; usage: TokenUsage };

/**
 * Runs one chat completion. Test mode's engine is the deterministic sandbox, live mode's
 * the OpenAI-compatible upstream. Aborting the signal stops it (the caller went away).
 */
export interface ChatEngine {
  complete(request: ChatRequest, signal: AbortSignal): AsyncIterable<EngineEvent>;
}

/** The engine cannot answer now (down, timed out, 5xx): 503 before the first byte, an error event after. */
export class EngineUnavailableError extends Error {}

/** The engine refused this request (a 4xx of the upstream's own, e.g. the prompt exceeds its context). */
export class EngineRejectedError extends Error {}
