import { Inject, Injectable } from '@nestjs/common';
import { randomBytes, randomUUID } from 'node:crypto';
import { Settings, SETTINGS } from '../config/settings';
import type { AuthContext } from '../platform/auth/auth-context';
import { Errors } from '../platform/errors';
import type { ChatRequest } from './chat-request';
import { ChoiceCollector } from './collect-choices';
import { ChatEngine, ChunkChoice, EngineChunk, EngineEvent, EngineRejectedError, EngineUnavailableError, FinishReason, TokenUsage } from './engines/engine';
import { SandboxEngine } from './engines/sandbox-engine';
import { UpstreamEngine } from './engines/upstream-engine';
import type { InferenceCallMetered } from './events';
import { costMicros, Price } from './model-catalog';
import { InferencePrices } from './prices';
import { promptTokens, textTokens } from './tokens';
import { UsageMeter } from './usage-meter';

/** How a call ended, as metered: the engine's finish, or the caller leaving, or the engine failing mid-stream. */
export type Outcome = FinishReason | 'cancelled' | 'error';

/** Spec part 5.4: premium keys with inference:run only, and a live one only once its activation is paid. */
export function assertMayRunInference(auth: AuthContext): void {
  if (auth.tier !== 'premium' || (auth.scopes.length && !auth.scopes.includes('inference:run'))) {
    throw Errors.scopeRequired(['inference:run']);
  }
  if (!auth.active) {
    throw Errors.paymentRequired('This premium key is not active yet: complete its activation checkout (svc keys list shows it; svc keys activation KEY_ID opens a new one once it lapsed) to run inference.');
  }
}

/**
 * One chat completion under way. It was started with its first event already in hand, so a
 * failure to start surfaced as an error response; from here it only yields chunks and, at the
 * end, meters itself.
 */
export class CompletionRun {
  readonly id = `chatcmpl-${randomBytes(12).toString('hex')}`;
  readonly created = Math.floor(Date.now() / 1000);
  private readonly startedAt = new Date();
  /** What the engine generated, for the tokenizer to count when the engine reports no usage. */
  private readonly texts: string[] = [];
  private finish: FinishReason = 'stop';
  private usage?: TokenUsage & Record<string, unknown>;
  private fingerprint: string | null = null;
  private extra?: Record<string, unknown>;

  constructor(
    readonly request: ChatRequest,
    private readonly auth: AuthContext,
    private readonly events: AsyncIterator<EngineEvent>,
    private first: IteratorResult<EngineEvent>,
    private readonly price: Promise<Price>,
    private readonly meter: UsageMeter,
  ) {}

  get finishReason(): FinishReason {
    return this.finish;
  }

  get systemFingerprint(): string | null {
    return this.fingerprint;
  }

  /** The engine's chunks as they arrive; ends when the engine finishes, or when the signal given to start() aborts. */
  async *chunks(): AsyncIterable<EngineChunk> {
    for (let next = this.first; !next.done; next = await this.events.next()) {
      const event = next.value;
      if (event.type === 'usage') {
        this.usage = event.usage;
        continue;
      }
      const chunk = event.chunk;
      for (const choice of chunk.choices) this.note(choice);
      if (chunk.system_fingerprint) this.fingerprint = chunk.system_fingerprint;
      if (chunk.extra) this.extra = { ...this.extra, ...chunk.extra };
      yield chunk;
    }
  }

  /** The whole answer as one chat.completion's choices, and the top-level fields an upstream added. */
  async collect(): Promise<{ choices: unknown[]; extra?: Record<string, unknown> }> {
    const collector = new ChoiceCollector();
    for await (const chunk of this.chunks()) collector.add(chunk.choices);
    return { choices: collector.result(), extra: this.extra };
  }

  private note(choice: ChunkChoice): void {
    const delta = choice.delta;
    if (delta) {
      if (typeof delta.content === 'string') this.texts.push(delta.content);
      if (typeof delta.refusal === 'string') this.texts.push(delta.refusal);
      if (Array.isArray(delta.tool_calls)) {
        for (const call of delta.tool_calls) {
          if (typeof call?.function?.name === 'string') this.texts.push(call.function.name);
          if (typeof call?.function?.arguments === 'string') this.texts.push(call.function.arguments);
        }
      }
    }
    // One choice cut short makes the call's metered finish "length".
    if (choice.finish_reason === 'length') this.finish = 'length';
  }

  /**
   * Records the call (durably, before the caller's last bytes) and returns its usage: the
   * engine's counts when it gave them, else the tokenizer's over what was sent.
   */
  async record(outcome: Outcome): Promise<TokenUsage & { total_tokens: number }> {
    const reported = outcome === this.finish ? this.usage : undefined;
    const usage = reported ?? { prompt_tokens: fallbackPromptTokens(this.request), completion_tokens: textTokens(this.texts.join('')).length };
    const price = await this.price;
    const call: InferenceCallMetered = {
      call_id: randomUUID(),
      key_id: this.auth.keyId,
      account_id: this.auth.accountId,
      mode: this.auth.mode,
      model: this.request.model.id,
      prompt_tokens: usage.prompt_tokens,
      completion_tokens: usage.completion_tokens,
      price,
      cost_micros: costMicros(price, usage.prompt_tokens, usage.completion_tokens),
      finish_reason: outcome,
      latency_ms: Date.now() - this.startedAt.getTime(),
      started_at: this.startedAt.toISOString(),
    };
    await this.meter.record(call);
    // The engine's own details (cached or reasoning tokens) are the caller's too; the counts are what was metered.
    return { ...usage, prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens, total_tokens: usage.prompt_tokens + usage.completion_tokens };
  }
}

/**
 * The prompt as the tokenizer counts it when the engine reports no usage: the messages'
 * text, plus the tool definitions and earlier tool calls, which an engine also reads.
 */
function fallbackPromptTokens(request: ChatRequest): number {
  let extra = '';
  const { tools, messages } = request.raw;
  if (Array.isArray(tools)) extra += JSON.stringify(tools);
  for (const message of messages as { tool_calls?: unknown }[]) {
    if (Array.isArray(message.tool_calls)) extra += JSON.stringify(message.tool_calls);
  }
  return promptTokens(request.messages) + (extra ? textTokens(extra).length : 0);
}

/** The inference gateway: picks the mode's engine, starts the call, and hands back a run to stream or collect. */
@Injectable()
export class ChatCompletions {
  private readonly sandbox = new SandboxEngine();
  private readonly upstream?: ChatEngine;

  constructor(
    @Inject(SETTINGS) settings: Settings,
    private readonly prices: InferencePrices,
    private readonly meter: UsageMeter,
  ) {
    if (settings.inferenceUpstream) this.upstream = new UpstreamEngine(settings.inferenceUpstream);
  }

  async start(auth: AuthContext, request: ChatRequest, signal: AbortSignal): Promise<CompletionRun> {
    const engine = auth.mode === 'test' ? this.sandbox : this.upstream;
    if (!engine) throw Errors.serviceUnavailable('Live inference is not configured on this service (INFERENCE_UPSTREAM_URL); retry later.');
    // The price in force now is the call's price; it is read while the engine starts, off the critical path.
    const price = this.prices.priceOf(request.model);
    price.catch(() => undefined);
    const events = engine.complete(request, signal)[Symbol.asyncIterator]();
    let first: IteratorResult<EngineEvent>;
    try {
      first = await events.next();
    } catch (error) {
      throw asApiError(error);
    }
    return new CompletionRun(request, auth, events, first, price, this.meter);
  }
}

export function asApiError(error: unknown): Error {
  if (error instanceof EngineUnavailableError) return Errors.serviceUnavailable(`${error.message} Retry with backoff.`);
  if (error instanceof EngineRejectedError) return Errors.invalidRequest(error.message);
  return error as Error;
}
