import OpenAI from 'openai';
import type { InferenceUpstreamSettings } from '../../config/settings';
import type { ChatRequest } from '../chat-request';
import { ChatEngine, EngineEvent, EngineRejectedError, EngineUnavailableError, FinishReason } from './engine';

/** Upstream 4xx answers that are about the request itself; any other failure is ours to retry later. */
const REJECTIONS = new Set([400, 404, 413, 422]);

/**
 * Live mode's engine: an OpenAI-compatible server (vLLM, llama.cpp, Ollama, OpenAI) through
 * the official `openai` client, always streamed so each delta is passed on as it arrives.
 * Usage comes from the upstream (stream_options.include_usage) when it reports it.
 */
export class UpstreamEngine implements ChatEngine {
  private readonly client: OpenAI;

  constructor(private readonly settings: InferenceUpstreamSettings) {
    // No retries: before the first byte the caller retries (503 says so); after it, never.
    this.client = new OpenAI({ baseURL: settings.url, apiKey: settings.apiKey ?? 'unused', maxRetries: 0, timeout: settings.timeoutMs });
  }

  async *complete(request: ChatRequest, signal: AbortSignal): AsyncIterable<EngineEvent> {
    // One controller for both reasons to stop: the caller left (signal) or the upstream went quiet (watchdog).
    const controller = new AbortController();
    const onCallerGone = () => controller.abort();
    signal.addEventListener('abort', onCallerGone, { once: true });
    let quiet = false;
    let watchdog: NodeJS.Timeout | undefined;
    const rearm = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => {
        quiet = true;
        controller.abort();
      }, this.settings.timeoutMs);
    };
    rearm();
    try {
      const stream = await this.client.chat.completions.create(
        {
          model: this.settings.models[request.model.id] ?? request.model.id,
          messages: request.messages as OpenAI.ChatCompletionMessageParam[],
          max_tokens: request.maxTokens,
          temperature: request.temperature,
          top_p: request.topP,
          stop: request.stop.length ? request.stop : undefined,
          stream: true,
          stream_options: { include_usage: true },
        },
        { signal: controller.signal },
      );
      let finish: FinishReason | undefined;
      for await (const chunk of stream) {
        rearm();
        const choice = chunk.choices?.[0];
        const text = choice?.delta?.content;
        if (text) yield { type: 'delta', text };
        if (choice?.finish_reason) finish = choice.finish_reason === 'length' ? 'length' : 'stop';
        if (chunk.usage) {
          yield { type: 'finish', reason: finish ?? 'stop' };
          yield { type: 'usage', usage: { prompt_tokens: chunk.usage.prompt_tokens, completion_tokens: chunk.usage.completion_tokens } };
          return;
        }
      }
      if (signal.aborted) return;
      // The client ends a stream it aborted without an error: the watchdog's abort is one.
      if (quiet) throw new EngineUnavailableError(silent(this.settings.timeoutMs));
      yield { type: 'finish', reason: finish ?? 'stop' };
    } catch (error) {
      if (signal.aborted) return;
      throw describe(error, quiet, this.settings.timeoutMs);
    } finally {
      clearTimeout(watchdog);
      signal.removeEventListener('abort', onCallerGone);
      // Leaving early (the caller went away) must not leave the upstream generating.
      controller.abort();
    }
  }
}

const silent = (timeoutMs: number) => `The inference engine sent nothing for ${timeoutMs} ms.`;

function describe(error: unknown, quiet: boolean, timeoutMs: number): Error {
  if (quiet || error instanceof OpenAI.APIConnectionTimeoutError) {
    return new EngineUnavailableError(silent(timeoutMs));
  }
  if (error instanceof OpenAI.APIError && error.status !== undefined) {
    if (REJECTIONS.has(error.status)) return new EngineRejectedError(`The inference engine refused the request: ${error.message}`);
    return new EngineUnavailableError(`The inference engine answered ${error.status}.`);
  }
  return new EngineUnavailableError('The inference engine could not be reached or dropped the connection.');
}
