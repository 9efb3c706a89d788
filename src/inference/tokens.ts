import { decode, encode, encodeChat } from 'gpt-tokenizer';
import type { ChatMessage } from './chat-request';

/**
 * Token counts with a real BPE tokenizer (o200k_base, GPT-4o's): the sandbox's counts, and
 * live mode's when an upstream reports no usage.
 */
export function promptTokens(messages: readonly ChatMessage[]): number {
  // encodeChat adds the chat format's per-message and priming tokens, as OpenAI counts them.
  return encodeChat(messages as Parameters<typeof encodeChat>[0], 'gpt-4o').length;
}

export function textTokens(text: string): number[] {
  return encode(text);
}

export function tokenText(tokens: readonly number[]): string {
  return decode(tokens);
}
