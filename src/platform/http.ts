import { Logger, ValidationPipe } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyCompress from '@fastify/compress';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Settings } from '../config/settings';
import { assertOperatorMay, OperatorAuthenticator } from './auth/operator';
import { applyRouteBodyLimits } from './body-limit';
import type { AuthContext } from './auth/auth-context';
import { clientErrorResponse, rawErrorResponse, sendError } from './error-filter';
import { ApiError, Errors } from './errors';
import { assertStorable, parseJsonObject } from './request-strings';
import { setActor } from './request-context';
import { problemsOf, validationAnswer } from './validation-answer';

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

declare module 'fastify' {
  interface FastifyRequest {
    /** The body exactly as received, for signature checks. */
    rawBody?: string;
  }
}

/**
 * Request ids from a pool of random bytes refilled 4 KiB at a time: a randomBytes call per
 * request (a system call for so few bytes) took ~5% of a GET /v1/me's CPU (issue 27 profile).
 */
const ENTROPY_POOL = 4096;
let entropy = Buffer.alloc(0);
let taken = 0;
function newRequestId(): string {
  if (taken + 12 > entropy.length) {
    entropy = randomBytes(ENTROPY_POOL);
    taken = 0;
  }
  taken += 12;
  return `req_${entropy.toString('hex', taken - 12, taken)}`;
}

/** A client-sent x-request-id of 1-128 safe characters is kept; otherwise one is made. */
function requestId(req: IncomingMessage): string {
  const sent = req.headers['x-request-id'];
  return typeof sent === 'string' && CLIENT_REQUEST_ID.test(sent) ? sent : newRequestId();
}

/** Node's HTTP parser refused the request before Fastify saw it: answer in the envelope and close. */
function clientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const responding = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
  if (socket.writable && !responding) socket.write(clientErrorResponse(error, newRequestId()));
  socket.destroy();
}

export function createHttpAdapter(settings: Settings): FastifyAdapter {
  const logger = new Logger('HTTP');
  const t = settings.http;
  return new FastifyAdapter({
    genReqId: requestId,
    trustProxy: settings.trustProxy,
    bodyLimit: settings.bodyLimitBytes,
    logger: false,
    requestTimeout: t.requestTimeoutMs,
    connectionTimeout: t.idleTimeoutMs,
    keepAliveTimeout: t.keepAliveTimeoutMs,
    // Node checks the request and header timeouts every connectionsCheckingInterval (default 30 s).
    // requireHostHeader off: Node's own refusal is an empty 400; configureHttp answers it in the envelope.
    http: { headersTimeout: t.headersTimeoutMs, connectionsCheckingInterval: Math.min(1000, t.headersTimeoutMs), requireHostHeader: false },
    clientErrorHandler: clientError,
    // A URL Fastify cannot route (bad percent-encoding, a path segment over 100 characters).
    frameworkErrors: (error: Error, request: FastifyRequest, reply: FastifyReply) => sendError(request, reply, error, logger),
  });
}

/** Answers under this many bytes are sent as they are: compressing them costs more than it saves. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;
/**
 * Text answers only: JSON, HTML, JavaScript, CSS. Never server-sent events (a compressor
 * buffers, so the deltas would stop streaming; chat completions also write them to the raw
 * socket), nor files (octet-stream, images: already compressed, and ranges must stay byte ranges).
 */
const COMPRESSIBLE = /^(?:application\/(?:json|javascript|[\w.-]+\+json)|text\/(?:html|css|plain|javascript|csv))(?:;|$)/u;

/**
 * gzip or br (whichever the client's Accept-Encoding prefers) for answers of at least
 * COMPRESSION_THRESHOLD_BYTES, e.g. the 90 KB OpenAPI document (issue 42). Request bodies are
 * not decompressed: a body with a Content-Encoding is parsed as sent, as before. Registered
 * before any route exists: the plugin wraps each route as it is added.
 */
export async function registerCompression(fastify: FastifyInstance): Promise<void> {
  await fastify.register(fastifyCompress, {
    encodings: ['br', 'gzip'],
    threshold: COMPRESSION_THRESHOLD_BYTES,
    customTypes: COMPRESSIBLE,
    globalDecompression: false,
  });
}

/** How requests authenticate: the composition root gives the API key check (accounts) and the public /v1 routes. */
export interface HttpAuth {
  /** Who the bearer API key in an Authorization header belongs to; throws the 401 errors. */
  authenticateApiKey(header: string | undefined): AuthContext | Promise<AuthContext>;
  /** Which operator the bearer token in an Authorization header is (the operators context); throws the 401 errors. */
  authenticateOperator: OperatorAuthenticator;
  /** /v1 routes that take no key (the OpenAPI document). */
  publicRoutes: readonly string[];
}

/**
 * Which credentials a route takes, from its path: /v1 an API key (but the public routes
 * none), /admin and /metrics an operator token, and the operator's role must allow the
 * route; others their own (signatures). The caller becomes the actor of what the request
 * appends (request-context.ts).
 */
function authenticateBeforeBody(fastify: FastifyInstance, auth: HttpAuth): void {
  const caller = (request: FastifyRequest, context: AuthContext) => {
    request.auth = context;
    setActor({ type: 'api_key', id: context.keyId });
  };
  // A kept key is known at once (no promise); another is read first.
  const apiKey = (request: FastifyRequest, done: (error?: Error) => void) => {
    const known = auth.authenticateApiKey(request.headers.authorization);
    if (!(known instanceof Promise)) return caller(request, known), done();
    known.then((context) => (caller(request, context), done()), done);
  };
  const operator = async (request: FastifyRequest, route: string) => {
    request.operator = await auth.authenticateOperator(request.headers.authorization);
    setActor({ type: 'operator', id: request.operator.name });
    assertOperatorMay(request.operator, route);
  };
  // Callback style: a route taking neither credential (health, blobs, the console) makes no promise.
  fastify.addHook('onRequest', (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
    const route = request.routeOptions.url ?? '';
    if (route.startsWith('/v1/') && !auth.publicRoutes.includes(route)) apiKey(request, done);
    else if (route.startsWith('/admin/') || route === '/metrics') operator(request, route).then(() => done(), done);
    else done();
  });
}

/**
 * Fastify-level behaviour shared by the service and the tests: request ids on every
 * response, the canonical-host redirect, authentication before the body is read, path and
 * query values Postgres can store, and the one JSON body parser.
 */
export function configureHttp(fastify: FastifyInstance, settings: Settings, auth: HttpAuth): void {
  answerInEnvelopeBeforeFastify(fastify);
  applyRouteBodyLimits(fastify);
  // The hooks every request runs are callback style where they need not wait: an async hook is
  // a promise a request, which the request context's async hooks follow on Node 20 (GET /v1/me profile).
  fastify.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    reply.header('x-request-id', request.id);
    if (!request.headers.host) return done(new ApiError(400, 'invalid_request', 'The request has no Host header; HTTP/1.1 requires one.'));
    const canonical = settings.canonicalHost;
    if (canonical) {
      const host = (request.headers.host ?? '').toLowerCase();
      const bare = canonical.slice('www.'.length).toLowerCase();
      if (host === bare) {
        const proto = String(request.headers['x-forwarded-proto'] ?? request.protocol).split(',')[0].trim();
        reply.code(308).header('location', `${proto}://${canonical}${request.url}`).send();
        return done();
      }
    }
    done();
  });
  // Unauthenticated requests are refused before their body is read or parsed.
  authenticateBeforeBody(fastify, auth);
  // An answer sent before the request's body arrived (a 401 from the hook above) closes the
  // connection: Node would otherwise keep the socket to drain a body that a client may
  // trickle until the request timeout.
  fastify.addHook('onSend', (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: Error | null, payload?: unknown) => void) => {
    if (!request.raw.complete) reply.header('connection', 'close');
    done(null, payload);
  });
  fastify.addHook('onRequest', (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
    assertStorable(request.params);
    assertStorable(request.query);
    done();
  });

  // Only JSON bodies are accepted (other types get 415), and a JSON body must be an object.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    request.rawBody = body as string;
    try {
      done(null, parseJsonObject(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}

/**
 * What Node answers by itself, before Fastify sees a request, answered in the envelope with a
 * request id and the connection closed: an Expect other than 100-continue (Node's empty 417)
 * and CONNECT (Node's closed socket); a missing Host is the onRequest hook's.
 */
function answerInEnvelopeBeforeFastify(fastify: FastifyInstance): void {
  const server = fastify.server;
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    res.socket?.end(rawErrorResponse(new ApiError(417, 'expectation_failed', 'Only "Expect: 100-continue" is supported; send the request without it.'), requestId(req)));
  });
  server.on('connect', (req: IncomingMessage, socket: Socket) => {
    socket.end(rawErrorResponse(new ApiError(405, 'method_not_allowed', 'CONNECT is not supported: this is not a proxy.'), requestId(req)));
  });
}

/**
 * class-validator DTOs: a field the DTO does not declare is refused (issue 39), and every
 * problem of the body is answered at once, in our words (validation-answer.ts).
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    // Kept on each error for the answer's words: the object (its class names the decorators'
    // arguments) and the value (absent means required); neither is sent.
    validationError: { target: true, value: true },
    exceptionFactory: (errors) => {
      const problems = problemsOf(errors);
      return problems.length ? validationAnswer(problems) : Errors.validationFailed('The request failed validation.');
    },
  });
}
