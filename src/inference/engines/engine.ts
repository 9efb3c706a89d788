import type { ChatRequest } from '../chat-request';

/** How a call ended, as metered: `length` when a choice ran out of tokens, else `stop`. */
export type FinishReason = 'stop' | 'length';

export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/**
 * One choice's part of a chat.completion.chunk, in OpenAI's wire format. Only the fields the
 * gateway reads are typed; every other field (tool_calls, logprobs, refusal, an engine's own
 * such as vLLM's reasoning_content) is carried to the caller as the engine sent it.
 */
export interface ChunkChoice {
  index: number;
  delta: {
    role?: string;
    content?: string | null;
    tool_calls?: { index?: number; function?: { name?: string; arguments?: string } }[];
    [field: string]: unknown;
  };
  finish_reason: string | null;
  logprobs?: unknown;
  [field: string]: unknown;
}

/** A chunk as the engine answered it, before the gateway puts its own id, model and usage on it. */
export interface EngineChunk {
  choices: ChunkChoice[];
  system_fingerprint?: string | null;
  /** Top-level fields of the upstream's chunk the gateway does not set itself (e.g. service_tier). */
  extra?: Record<string, unknown>;
}

/**
 * What an engine yields: chunks (their finish_reason on the last chunk of each choice), and
 * at the end the usage if it counts tokens itself. The usage may carry more than the two
 * counts (an upstream's prompt_tokens_details); the caller gets them too.
 */
export type EngineEvent = { type: 'chunk'; chunk: EngineChunk } | { type: 'usage'; usage: TokenUsage & Record<string, unknown> };

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
