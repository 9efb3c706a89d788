import type { ChunkChoice } from './engines/engine';

interface Call {
  index?: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
  [field: string]: unknown;
}

interface Collected {
  index: number;
  message: Record<string, unknown>;
  calls?: Call[];
  logprobs: Record<string, unknown> | null;
  finish_reason: string | null;
}

/**
 * Turns a stream of chunk choices into the choices of one chat.completion, as OpenAI's own
 * non-streamed answer has them: the upstream is always streamed (decisions: inference), so
 * a non-streamed caller gets the same message, tool calls and logprobs assembled. Strings
 * are concatenated (content, refusal, arguments, an engine's reasoning_content); anything
 * else the last chunk that carried it decides.
 */
export class ChoiceCollector {
  private readonly choices = new Map<number, Collected>();

  add(choices: readonly ChunkChoice[]): void {
    for (const choice of choices) {
      let into = this.choices.get(choice.index);
      if (!into) this.choices.set(choice.index, (into = { index: choice.index, message: {}, logprobs: null, finish_reason: null }));
      for (const [field, value] of Object.entries(choice.delta ?? {})) {
        if (field === 'tool_calls' && Array.isArray(value)) into.calls = mergeCalls(into.calls ?? [], value as Call[]);
        else if (field === 'function_call' && value) into.message.function_call = mergeFunction(into.message.function_call as Call['function'], value as Call['function']);
        else appendOrSet(into.message, field, value);
      }
      if (choice.logprobs) {
        into.logprobs ??= {};
        for (const [field, value] of Object.entries(choice.logprobs)) {
          const before = into.logprobs[field];
          into.logprobs[field] = Array.isArray(before) && Array.isArray(value) ? before.concat(value) : value;
        }
      }
      if (choice.finish_reason) into.finish_reason = choice.finish_reason;
    }
  }

  result(): unknown[] {
    return [...this.choices.values()]
      .sort((a, b) => a.index - b.index)
      .map(({ index, message, calls, logprobs, finish_reason }) => {
        const { role, content, refusal, ...rest } = message;
        const toolCalls = calls?.map(({ index: _, ...call }) => call);
        return {
          index,
          message: {
            role: role ?? 'assistant',
            // OpenAI's: null when the answer is only a tool call, else the text, empty if there was none.
            content: content ?? (toolCalls || rest.function_call ? null : ''),
            refusal: refusal ?? null,
            ...rest,
            ...(toolCalls ? { tool_calls: toolCalls } : {}),
          },
          logprobs,
          finish_reason,
        };
      });
  }
}

function appendOrSet(into: Record<string, unknown>, field: string, value: unknown): void {
  const before = into[field];
  if (typeof value === 'string' && typeof before === 'string') into[field] = before + value;
  else if (value !== null || before === undefined) into[field] = value;
}

function mergeFunction(before: Call['function'] | undefined, part: Call['function']): Call['function'] {
  if (!before) return { ...part };
  return { ...before, ...part, arguments: (before.arguments ?? '') + (part?.arguments ?? '') };
}

/** Tool call deltas name their call by `index`; its id, type and name come once, its arguments in pieces. */
function mergeCalls(calls: Call[], parts: Call[]): Call[] {
  for (const [position, part] of parts.entries()) {
    const index = typeof part.index === 'number' ? part.index : position;
    const call = calls.find((c) => c.index === index);
    if (!call) {
      calls.push({ ...part, index, type: part.type ?? 'function', function: { name: part.function?.name ?? '', arguments: part.function?.arguments ?? '' } });
      continue;
    }
    for (const [field, value] of Object.entries(part)) {
      if (field === 'function') call.function = { ...call.function, ...(value as Call['function']), arguments: (call.function?.arguments ?? '') + ((value as Call['function'])?.arguments ?? '') };
      else if (field !== 'index' && value !== null && value !== undefined) call[field] = value;
    }
  }
  return calls;
}
