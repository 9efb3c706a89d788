import { createParser, EventSourceMessage } from 'eventsource-parser';
import { StringDecoder } from 'node:string_decoder';
import { Agent, errors, request } from 'undici';
import type { InferenceUpstreamSettings } from '../../config/settings';
import type { ChatRequest } from '../chat-request';
import { ChatEngine, EngineEvent, EngineRejectedError, EngineUnavailableError, FinishReason, TokenUsage } from './engine';

/** Upstream 4xx answers that are about the request itself; any other failure is ours to retry later. */
const REJECTIONS = new Set([400, 404, 413, 422]);

/** The fields of an OpenAI chat.completion.chunk this engine reads. */
interface UpstreamChunk {
  choices?: { delta?: { content?: string | null }; finish_reason?: string | null }[];
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
  error?: { message?: string };
}

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
    const deltas: EngineEvent[] = [];
    let finish: FinishReason | undefined;
    let usage: TokenUsage | undefined;
    let done = false;
    const parser = createParser({
      onEvent: (message: EventSourceMessage) => {
        if (message.data === '[DONE]') return void (done = true);
        const chunk = JSON.parse(message.data) as UpstreamChunk;
        if (chunk.error) throw new EngineUnavailableError(`The inference engine failed mid-stream: ${chunk.error.message ?? 'unknown error'}.`);
        const choice = chunk.choices?.[0];
        if (choice?.delta?.content) deltas.push({ type: 'delta', text: choice.delta.content });
        if (choice?.finish_reason) finish = choice.finish_reason === 'length' ? 'length' : 'stop';
        if (chunk.usage) {
          usage = { prompt_tokens: chunk.usage.prompt_tokens, completion_tokens: chunk.usage.completion_tokens };
          done = true;
        }
      },
    });
    try {
      const response = await request(this.url, { method: 'POST', headers: this.headers, body: JSON.stringify(this.body(chat)), signal, dispatcher: this.pool });
      if (response.statusCode !== 200) throw refusal(response.statusCode, await response.body.text().catch(() => ''));
      const decoder = new StringDecoder('utf8');
      for await (const bytes of response.body) {
        parser.feed(decoder.write(bytes as Buffer));
        yield* deltas.splice(0);
      }
    } catch (error) {
      if (signal.aborted) return;
      throw describe(error, this.settings.timeoutMs);
    }
    if (signal.aborted) return;
    if (!done && !finish) throw new EngineUnavailableError('The inference engine ended the stream before finishing.');
    yield { type: 'finish', reason: finish ?? 'stop' };
    if (usage) yield { type: 'usage', usage };
  }

  private body(chat: ChatRequest) {
    return {
      model: this.settings.models[chat.model.id] ?? chat.model.id,
      messages: chat.messages,
      max_tokens: chat.maxTokens,
      temperature: chat.temperature,
      top_p: chat.topP,
      stop: chat.stop.length ? chat.stop : undefined,
      stream: true,
      stream_options: { include_usage: true },
    };
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
