import type * as GptTokenizer from 'gpt-tokenizer';
import type { ChatMessage } from './chat-request';

let loaded: typeof GptTokenizer | undefined;
/**
 * Loaded at the first count, not at start: its tables take longer to load than the rest of
 * the inference module, and a process that never counts a token (a worker, a test of
 * another context) need not pay for them.
 */
function tokenizer(): typeof GptTokenizer {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (loaded ??= require('gpt-tokenizer') as typeof GptTokenizer);
}

/**
 * Token counts with a real BPE tokenizer (o200k_base, GPT-4o's): the sandbox's counts, and
 * live mode's when an upstream reports no usage.
 */
export function promptTokens(messages: readonly ChatMessage[]): number {
  // encodeChat adds the chat format's per-message and priming tokens, as OpenAI counts them.
  return tokenizer().encodeChat(messages as Parameters<typeof GptTokenizer.encodeChat>[0], 'gpt-4o').length;
}

export function textTokens(text: string): number[] {
  return tokenizer().encode(text);
}

export function tokenText(tokens: readonly number[]): string {
  return tokenizer().decode(tokens);
}
