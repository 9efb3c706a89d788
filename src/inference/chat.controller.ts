import { Body, Controller, Get, Inject, Param, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { ServerResponse } from 'node:http';
import { Settings, SETTINGS } from '../config/settings';
import { Auth, AuthContext } from '../platform/auth/auth-context';
import { toApiError } from '../platform/error-filter';
import { Errors } from '../platform/errors';
import { outlastIdleTimeout } from '../platform/long-running';
import { asApiError, assertMayRunInference, ChatCompletions, CompletionRun } from './chat-completions';
import { modelNotFound, parseChatRequest } from './chat-request';
import type { EngineChunk } from './engines/engine';
import { InferencePrices } from './prices';

/**
 * OpenAI's chunk object, exactly as the `openai` client reads it: the engine's choices as it
 * sent them (tool call deltas, logprobs and all), under the gateway's id, public model id and
 * usage. Built per chunk without copying the choices: this is the streaming hot path.
 */
function chunk(run: CompletionRun, engine: EngineChunk, usage: { usage?: unknown }) {
  const frame = { id: run.id, object: 'chat.completion.chunk', created: run.created, model: run.request.model.id, system_fingerprint: engine.system_fingerprint ?? null, choices: engine.choices, ...usage };
  return engine.extra ? { ...engine.extra, ...frame } : frame;
}

@Controller('v1')
export class ChatController {
  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly completions: ChatCompletions,
    private readonly prices: InferencePrices,
  ) {}

  /**
   * GET /v1/inference/models: the catalog with the prices in force. Any valid key. `items` is
   * our page envelope's name, `data` OpenAI's (issue 42): both, so neither kind of client finds nothing.
   */
  @Get('inference/models')
  async models() {
    const models = await this.prices.list();
    return { object: 'list', items: models, data: models };
  }

  /**
   * The OpenAI-compatible base URL is `{base}/v1/openai` (issue 42): the `openai` clients
   * call `{baseURL}/models`, which under `/v1` is the marketplace. These routes are OpenAI's
   * shapes over the same catalog and the same gateway as the routes above.
   */
  @Get('openai/models')
  async openaiModels() {
    return { object: 'list', data: await this.prices.list() };
  }

  /** GET /v1/openai/models/{id}: one model object; an unknown id is OpenAI's 404 `model_not_found`. */
  @Get('openai/models/:id')
  async openaiModel(@Param('id') id: string) {
    const model = (await this.prices.list()).find((m) => m.id === id);
    if (!model) throw modelNotFound(id);
    return model;
  }

  /** POST /v1/openai/chat/completions: the gateway of POST /v1/chat/completions, at the OpenAI base URL. */
  @Post('openai/chat/completions')
  async openaiCreate(@Auth() auth: AuthContext, @Body() body: unknown, @Res() reply: FastifyReply): Promise<void> {
    return this.create(auth, body, reply);
  }

  /** POST /v1/chat/completions: OpenAI-compatible; `stream: true` answers server-sent events. */
  @Post('chat/completions')
  async create(@Auth() auth: AuthContext, @Body() body: unknown, @Res() reply: FastifyReply): Promise<void> {
    assertMayRunInference(auth);
    const request = parseChatRequest(body);
    const res = reply.raw;
    // A generation may think longer than an idle socket may stay open; the engine's own timeout bounds it instead.
    outlastIdleTimeout(res, this.settings.http.idleTimeoutMs);
    const callerGone = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) callerGone.abort();
    });

    const run = await this.completions.start(auth, request, callerGone.signal);
    if (request.stream) return this.stream(run, reply, callerGone.signal);

    const { choices, extra } = await run.collect();
    if (callerGone.signal.aborted) return void (await run.record('cancelled').catch(() => undefined));
    const usage = await run.record(run.finishReason).catch(() => {
      throw notMetered();
    });
    reply.code(200).send({
      ...extra,
      id: run.id,
      object: 'chat.completion',
      created: run.created,
      model: request.model.id,
      system_fingerprint: run.systemFingerprint,
      choices,
      usage,
    });
  }

  /** Each delta is written the moment the engine yields it; the last bytes wait until the call is metered. */
  private async stream(run: CompletionRun, reply: FastifyReply, callerGone: AbortSignal): Promise<void> {
    const res = reply.raw;
    reply.hijack();
    res.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
    });
    const includeUsage = run.request.includeUsage;
    const usageField = includeUsage ? { usage: null } : {};
    try {
      // The engine's last chunks carry each choice's finish_reason (tool_calls included).
      for await (const engineChunk of run.chunks()) await send(res, chunk(run, engineChunk, usageField));
    } catch (error) {
      // Mid-stream: never retried, never a second status line; an error event ends it (spec part 7).
      await run.record('error').catch(() => undefined);
      return endWithError(res, asApiError(error), reply.request.id);
    }
    if (callerGone.aborted) return void (await run.record('cancelled').catch(() => undefined));
    let usage;
    try {
      usage = await run.record(run.finishReason);
    } catch {
      return endWithError(res, notMetered(), reply.request.id);
    }
    if (includeUsage) await send(res, chunk(run, { choices: [], system_fingerprint: run.systemFingerprint }, { usage }));
    res.end('data: [DONE]\n\n');
  }
}

/** The event store did not take the call's metering event: the call is not complete, and not billed. */
const notMetered = () => Errors.serviceUnavailable('The call could not be recorded, so it was not completed; retry with backoff.');

/**
 * One server-sent event; waits when the caller reads slower than the engine writes. Events
 * written in the same tick (one upstream read often carries several chunks) leave in one
 * syscall: the socket is corked until the tick ends.
 */
async function send(res: ServerResponse, data: unknown): Promise<void> {
  if (res.destroyed) return;
  const socket = res.socket;
  if (socket && !socket.writableCorked) {
    socket.cork();
    process.nextTick(() => socket.uncork());
  }
  if (!res.write(`data: ${JSON.stringify(data)}\n\n`)) {
    await new Promise<void>((resolve) => {
      res.once('drain', resolve);
      res.once('close', resolve);
    });
  }
}

function endWithError(res: ServerResponse, error: Error, requestId: string): void {
  const api = toApiError(error);
  if (!res.destroyed) res.end(`data: ${JSON.stringify({ error: { code: api.code, message: api.message, request_id: requestId } })}\n\n`);
}
