import { createParamDecorator, ExecutionContext, Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createHash, randomUUID } from 'node:crypto';
import { SETTINGS, Settings } from '../config/settings';
import { DATABASE, Database } from '../database/database';
import { Metrics } from '../metrics/metrics';
import { ApiError, Errors } from '../platform/errors';
import { resolveWebhookKey, SecretBox } from '../platform/secret-box';
import { IdempotencyKeys, KeyedRequest } from './idempotency-keys';

/** Stripe's limit on a key's length. */
export const MAX_KEY_LENGTH = 255;
const SWEEP_EVERY_MS = 3600 * 1000;

/** The key a running request holds, on the request from preHandler to onSend. */
interface Running {
  request: KeyedRequest;
  owner: string;
  settled: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    idempotency?: Running;
  }
}

/** An answer kept under a key, as first sent. */
export interface KeptAnswer {
  status: number;
  contentType: string | null;
  body: string;
}

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * The Idempotency-Key this request runs under, as the hook took it (undefined without one, or
 * where keys are not kept): for a handler that passes it on, as the operator's refund names the
 * processor's refund after it. Handlers never read the header themselves.
 */
export const IdempotencyKey = createParamDecorator((_data: unknown, context: ExecutionContext): string | undefined => {
  return context.switchToHttp().getRequest<FastifyRequest>().idempotency?.request.key;
});

/**
 * Idempotency-Key on every POST of /v1 and /admin (issue 39, Stripe's semantics): the first
 * request under a key runs and its answer is kept; a retry of the same request gets that
 * answer byte for byte with `Idempotent-Replayed: true` and runs nothing; another request
 * under the key is 400 `idempotency_key_reused`; one arriving while the first still runs is
 * 409 `idempotency_key_in_use`. 5xx answers (and streamed ones) are not kept, so their retry
 * runs again. Keys belong to the caller: an API key's account and mode, or the operator.
 *
 * Two Fastify hooks, installed once (app.ts) after authentication: preHandler takes the key
 * or answers from it, onSend keeps the answer; each is a statement shared with the other
 * requests of the moment (IdempotencyKeys batches them), the first committed without waiting
 * for the WAL flush. A request without the header costs nothing. A key whose instance died
 * mid-request (kill -9) is free again once its lease passes: the running instance renews the leases of every key it runs,
 * in one statement per period, so a slow request keeps its key and a dead one lets it go.
 */
@Injectable()
export class IdempotentRequests implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Idempotency');
  private readonly keys: IdempotencyKeys;
  /** Answers at rest are sealed: some carry a secret shown once (an API key, a signing secret). */
  private readonly box: SecretBox;
  private readonly running = new Set<string>();
  private renewer?: NodeJS.Timeout;
  private sweeper?: NodeJS.Timeout;

  constructor(
    @Inject(DATABASE) db: Database,
    @Inject(SETTINGS) private readonly settings: Settings,
    metrics: Metrics,
  ) {
    this.keys = new IdempotencyKeys(db, settings.consumerLeaseTtlMs, (kind, requests) => {
      metrics.idempotencyStatements.inc({ kind });
      metrics.idempotencyRequests.inc({ kind }, requests);
    });
    this.box = new SecretBox(resolveWebhookKey(settings));
  }

  onApplicationBootstrap(): void {
    this.renewer = setInterval(() => void this.renew(), Math.max(50, Math.floor(this.keys.leaseMs / 3))).unref();
    if (this.settings.workers) this.sweeper = setInterval(() => void this.sweep(), SWEEP_EVERY_MS).unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.renewer);
    clearInterval(this.sweeper);
  }

  /**
   * Adds the two hooks to each POST route added from now on (Nest adds its routes at init, the
   * console its own at ready): a GET, which can never carry a key, runs neither (issue 39's
   * GET /v1/me profile: two async hooks a request, each a promise the request context's
   * async hooks follow). Put first among the route's own hooks: the answer is kept as the
   * handler made it, before compression turns it into a stream. The preHandler only where a
   * key is read (/v1 and /admin); the onSend on every POST route, since the console's forms
   * take their key themselves (begin) and count on it to keep their answer.
   */
  install(fastify: FastifyInstance): void {
    const take = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
      if (request.headers['idempotency-key'] === undefined) return done();
      this.take(request, reply).then(() => done(), done);
    };
    const keep = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: Error | null, payload?: unknown) => void) => {
      const running = request.idempotency;
      if (!running || running.settled) return done(null, payload);
      this.keep(running, reply, payload).then(() => done(null, payload), done);
    };
    fastify.addHook('onRoute', (route) => {
      if (!([] as string[]).concat(route.method).includes('POST')) return;
      if (route.url.startsWith('/v1/') || route.url.startsWith('/admin/')) route.preHandler = [take, ...([] as unknown[]).concat(route.preHandler ?? [])] as typeof route.preHandler;
      route.onSend = [keep, ...([] as unknown[]).concat(route.onSend ?? [])] as typeof route.onSend;
    });
  }

  private async take(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const header = request.headers['idempotency-key'];
    if (header === undefined || request.method !== 'POST') return;
    const scope = scopeOf(request);
    if (!scope) return;
    if (typeof header !== 'string') throw Errors.validationFailed('Send one "Idempotency-Key" header, not several.');
    const kept = await this.begin(request, reply, scope, header, sha256(request.rawBody ?? ''));
    if (!kept) return;
    reply.code(kept.status).header('idempotent-replayed', 'true');
    if (kept.contentType) reply.header('content-type', kept.contentType);
    reply.send(kept.body);
  }

  /**
   * Takes `key` in `scope` for this request, or answers what it already kept. Undefined: the
   * request runs, and its answer is kept as it goes out (onSend). A kept answer: the caller
   * sends it (the API byte for byte; the console's forms follow the redirect it kept). Throws
   * `idempotency_key_reused` (400) and `idempotency_key_in_use` (409). Also the console's
   * entry (its forms carry the key as a field, read after the session is known).
   */
  async begin(request: FastifyRequest, reply: FastifyReply, scope: string, key: string, bodySha256: string): Promise<KeptAnswer | undefined> {
    if (!key.length || key.length > MAX_KEY_LENGTH) {
      throw Errors.validationFailed(`Invalid header "Idempotency-Key": 1 to ${MAX_KEY_LENGTH} characters, got ${key.length}.`);
    }
    const keyed: KeyedRequest = { scope, key, path: request.url, bodySha256 };
    const owner = randomUUID();
    const claim = await this.keys.claim(keyed, owner);
    if (claim.claimed) {
      const running: Running = { request: keyed, owner, settled: false };
      request.idempotency = running;
      this.running.add(owner);
      // A streamed answer (the reply hijacked) never reaches onSend: the key is let go when it ends.
      reply.raw.once('close', () => {
        if (!running.settled && reply.sent) void this.settle(running, () => this.keys.release(keyed, owner));
      });
      return undefined;
    }
    const held = claim.held;
    if (held && held.path !== keyed.path) throw reused(key, 'path', `POST ${held.path}`);
    if (held && held.bodySha256 !== keyed.bodySha256) throw reused(key, 'body', `POST ${held.path} with another body`);
    if (!held?.answer) {
      throw new ApiError(409, 'idempotency_key_in_use', `A request with the Idempotency-Key "${key}" is still running; retry once it has answered.`);
    }
    const { status, contentType, sealedBody } = held.answer;
    // Opened first: an answer sealed under another key (WEBHOOK_ENCRYPTION_KEY changed) is a 500, not a replay.
    return { status, contentType, body: this.box.open(sealedBody, `${scope}\n${key}`) };
  }

  /** Keeps the answer (not a 5xx, not a stream) or lets the key go. */
  private async keep(running: Running, reply: FastifyReply, payload: unknown): Promise<void> {
    const { request, owner } = running;
    // An empty answer (204) is kept as ''; a stream is not kept.
    const body = payload == null ? '' : typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : undefined;
    if (reply.statusCode >= 500 || body === undefined) return this.settle(running, () => this.keys.release(request, owner));
    const contentType = reply.getHeader('content-type');
    const sealed = this.box.seal(body, `${request.scope}\n${request.key}`);
    await this.settle(running, async () => {
      const kept = await this.keys.answer(request, owner, reply.statusCode, contentType === undefined ? null : String(contentType), sealed);
      if (!kept) this.logger.warn(`the answer under an Idempotency-Key was not kept: the key's lease passed and another request took it`);
    });
  }

  private async settle(running: Running, write: () => Promise<void>): Promise<void> {
    running.settled = true;
    try {
      await write();
    } catch (error) {
      // The answer still goes out; its key stays held until the lease passes, then a retry runs again.
      this.logger.error(`an Idempotency-Key could not be settled: ${(error as Error).message}`);
    } finally {
      this.running.delete(running.owner);
    }
  }

  private async renew(): Promise<void> {
    if (!this.running.size) return;
    await this.keys.renew([...this.running]).catch((error) => this.logger.warn(`renewing idempotency keys failed: ${error.message}`));
  }

  async sweep(): Promise<number> {
    try {
      const swept = await this.keys.sweep();
      if (swept) this.logger.log(`swept ${swept} idempotency key(s) older than a day`);
      return swept;
    } catch (error) {
      this.logger.warn(`the idempotency key sweep failed, to be tried again in an hour: ${(error as Error).message}`);
      return 0;
    }
  }
}

/** Whose key this is: an API key's account and mode on /v1, the operator on /admin; none elsewhere. */
function scopeOf(request: FastifyRequest): string | undefined {
  const route = request.routeOptions.url ?? '';
  if (route.startsWith('/v1/') && request.auth) return `${request.auth.accountId}:${request.auth.mode}`;
  if (route.startsWith('/admin/')) return 'operator';
  return undefined;
}

function reused(key: string, differs: 'path' | 'body', first: string): ApiError {
  return new ApiError(
    400,
    'idempotency_key_reused',
    `The Idempotency-Key "${key}" was first used for ${first}; this request's ${differs} differs. Use a new key for a different request.`,
    { differs },
  );
}
