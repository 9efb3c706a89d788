import { createParser, EventSourceMessage } from 'eventsource-parser';
import { StringDecoder } from 'node:string_decoder';
import { Agent, errors, request } from 'undici';
import type { InferenceUpstreamSettings } from '../../config/settings';
import type { ChatRequest } from '../chat-request';
import { ChatEngine, ChunkChoice, EngineChunk, EngineEvent, EngineRejectedError, EngineUnavailableError, TokenUsage } from './engine';

/** Upstream 4xx answers that are about the request itself; any other failure is ours to retry later. */
const REJECTIONS = new Set([400, 404, 413, 422]);

/** An OpenAI chat.completion.chunk; the fields this engine reads are typed, the rest is passed on. */
interface UpstreamChunk {
  choices?: ChunkChoice[];
  usage?: (TokenUsage & Record<string, unknown>) | null;
  system_fingerprint?: string | null;
  error?: { message?: string };
  [field: string]: unknown;
}

/** Chunk fields the gateway sets itself (ids and model are its own, usage is what it metered). */
const ENVELOPE = new Set(['id', 'object', 'created', 'model', 'choices', 'usage', 'system_fingerprint', 'error']);

/** Only the gateway's own fields are looked at: the chunk's choices are passed on as they are, not copied. */
function engineChunk(chunk: UpstreamChunk): EngineChunk {
  let extra: Record<string, unknown> | undefined;
  for (const field in chunk) if (!ENVELOPE.has(field)) (extra ??= {})[field] = chunk[field];
  return { choices: chunk.choices!, system_fingerprint: chunk.system_fingerprint, extra };
}

const isCount = (value: unknown) => typeof value === 'number' && Number.isInteger(value) && value >= 0;

/**
 * Live mode's engine: an OpenAI-compatible server (vLLM, llama.cpp, Ollama, OpenAI), always
 * asked to stream so each delta is passed on as it arrives. undici's request API on a
 * keep-alive pool (the official openai client's fetch path costs about a millisecond more
 * per call, see docs/performance.md) and eventsource-parser for the SSE framing. Usage comes
 * from the upstream (stream_options.include_usage) when it reports it.
 */
export class UpstreamEngine implements ChatEngine {
  private readonly url: string;
  private readonly headers: Record<string, string>;
  /** headersTimeout bounds the wait for the first byte, bodyTimeout the wait between two chunks. */
  private readonly pool: Agent;

  constructor(private readonly settings: InferenceUpstreamSettings) {
    this.url = `${settings.url}/chat/completions`;
    this.headers = { 'content-type': 'application/json', accept: 'text/event-stream', ...(settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {}) };
    this.pool = new Agent({ headersTimeout: settings.timeoutMs, bodyTimeout: settings.timeoutMs, connect: { timeout: settings.timeoutMs }, keepAliveTimeout: 30_000 });
  }

  async *complete(chat: ChatRequest, signal: AbortSignal): AsyncIterable<EngineEvent> {
    const chunks: EngineEvent[] = [];
    let finished = false;
    let usage: (TokenUsage & Record<string, unknown>) | undefined;
    let done = false;
    const parser = createParser({
      onEvent: (message: EventSourceMessage) => {
        if (message.data === '[DONE]') return void (done = true);
        const chunk = JSON.parse(message.data) as UpstreamChunk;
        if (chunk.error) throw new EngineUnavailableError(`The inference engine failed mid-stream: ${chunk.error.message ?? 'unknown error'}.`);
        if (chunk.choices?.length) {
          for (const choice of chunk.choices) if (choice.finish_reason) finished = true;
          chunks.push({ type: 'chunk', chunk: engineChunk(chunk) });
        }
        // A usage without both counts is not one we can bill by: the tokenizer counts instead.
        if (chunk.usage && isCount(chunk.usage.prompt_tokens) && isCount(chunk.usage.completion_tokens)) {
          usage = chunk.usage;
          done = true;
        }
      },
    });
    try {
      const response = await request(this.url, { method: 'POST', headers: this.headers, body: this.body(chat), signal, dispatcher: this.pool });
      if (response.statusCode !== 200) throw refusal(response.statusCode, await response.body.text().catch(() => ''));
      const decoder = new StringDecoder('utf8');
      for await (const bytes of response.body) {
        parser.feed(decoder.write(bytes as Buffer));
        yield* chunks.splice(0);
      }
    } catch (error) {
      if (signal.aborted) return;
      throw describe(error, this.settings.timeoutMs);
    }
    if (signal.aborted) return;
    if (!done && !finished) throw new EngineUnavailableError('The inference engine ended the stream before finishing.');
    if (usage) yield { type: 'usage', usage };
  }

  /**
   * The caller's body, every field as sent (tools, response_format, seed, logprobs, n and any
   * the engine knows and we do not: issue 24), but for the three the gateway owns: the
   * upstream's name for the model, and always streamed with usage, which is what is metered.
   */
  private body(chat: ChatRequest): string {
    const options = chat.raw.stream_options;
    return JSON.stringify({
      ...chat.raw,
      model: this.settings.models[chat.model.id] ?? chat.model.id,
      stream: true,
      stream_options: { ...(typeof options === 'object' && options !== null ? options : {}), include_usage: true },
    });
  }
}

function refusal(status: number, text: string): Error {
  let message = text.slice(0, 500);
  try {
    message = JSON.parse(text)?.error?.message ?? message;
  } catch {
    // not JSON: the text itself
  }
  if (REJECTIONS.has(status)) return new EngineRejectedError(`The inference engine refused the request: ${message}`);
  return new EngineUnavailableError(`The inference engine answered ${status}.`);
}

function describe(error: unknown, timeoutMs: number): Error {
  if (error instanceof EngineUnavailableError || error instanceof EngineRejectedError) return error;
  if (error instanceof errors.HeadersTimeoutError || error instanceof errors.BodyTimeoutError || error instanceof errors.ConnectTimeoutError) {
    return new EngineUnavailableError(`The inference engine sent nothing for ${timeoutMs} ms.`);
  }
  return new EngineUnavailableError('The inference engine could not be reached or dropped the connection.');
}
