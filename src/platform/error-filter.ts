import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES as HTTP_REASONS } from 'node:http';
import { ApiError, ConcurrencyConflict, DependencyUnavailable, ResourceDeleted, TooLargeToStore } from './errors';

const STATUS_CODES: Record<number, string> = {
  400: 'invalid_request',
  401: 'missing_credentials',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  503: 'service_unavailable',
};

/** Errors raised by Fastify or Node's HTTP parser, before a route handler runs. */
const FASTIFY_CODES: Record<string, (e: any) => ApiError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => new ApiError(413, 'payload_too_large', 'The request body is larger than the limit.'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: (e) =>
    new ApiError(415, 'unsupported_media_type', 'Send the body as JSON with content-type: application/json.'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () =>
    new ApiError(400, 'invalid_request', 'The content-length header does not match the body.'),
  FST_ERR_BAD_URL: () => new ApiError(400, 'invalid_request', 'The URL is not valid: a percent-encoded part is not UTF-8.'),
  FST_ERR_MAX_PARAM_LENGTH: () => new ApiError(414, 'uri_too_long', 'A path segment of the URL is longer than 100 characters.'),
  // Raised by Node's HTTP parser, before there is a request (see clientErrorResponse).
  ERR_HTTP_REQUEST_TIMEOUT: () => new ApiError(408, 'request_timeout', 'The request was not received in time.'),
  HPE_HEADER_OVERFLOW: () => new ApiError(431, 'headers_too_large', 'The request headers are too large.'),
};

/** Turns anything thrown into the public error envelope; the only place error bodies are made. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof ConcurrencyConflict) {
    return new ApiError(409, 'conflict', 'A concurrent request changed this resource; retry the request.');
  }
  if (error instanceof ResourceDeleted) {
    return new ApiError(404, 'not_found', 'This resource was deleted for good: it can no longer be read or changed.');
  }
  if (error instanceof TooLargeToStore) {
    return new ApiError(413, 'payload_too_large', `The change is larger than the event store takes in one write (at most ${error.limitBytes} bytes).`);
  }
  if (error instanceof DependencyUnavailable) {
    return new ApiError(503, 'service_unavailable', `The ${error.dependency} is unavailable; retry with backoff.`, {}, { 'retry-after': '1' });
  }
  const e = error as any;
  if (e && typeof e.code === 'string' && FASTIFY_CODES[e.code]) return FASTIFY_CODES[e.code](e);
  const status: number | undefined = error instanceof HttpException ? error.getStatus() : e?.statusCode;
  if (status === 413) return FASTIFY_CODES.FST_ERR_CTP_BODY_TOO_LARGE(e);
  if (status === 415) return FASTIFY_CODES.FST_ERR_CTP_INVALID_MEDIA_TYPE(e);
  if (status === 404) return new ApiError(404, 'not_found', 'Unknown route.');
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new ApiError(status, STATUS_CODES[status] ?? 'invalid_request', String(e?.message ?? 'Bad request.'));
  }
  return new ApiError(500, 'internal_error', 'An internal error occurred. Retry with backoff; quote the request id if it persists.');
}

/**
 * Writes the error envelope. The exception filter calls it for Nest routes; plain Fastify
 * routes (the local blob store's signed URLs) call it from their error handler.
 */
export function sendError(request: FastifyRequest, reply: FastifyReply, error: unknown, logger: Logger): void {
  const apiError = toApiError(error);
  if (apiError.status >= 500) {
    logger.error(`${request.method} ${request.url} [${request.id}]: ${(error as Error)?.stack ?? String(error)}`);
  }
  for (const [name, value] of Object.entries(apiError.headers)) reply.header(name, value);
  reply
    .status(apiError.status)
    .header('x-request-id', request.id)
    .header('content-type', 'application/json; charset=utf-8')
    .send(envelope(apiError, request.id));
}

/** The spec part 7 body. */
function envelope(apiError: ApiError, requestId: string) {
  return { error: { code: apiError.code, message: apiError.message, request_id: requestId, ...apiError.extra } };
}

/**
 * The raw HTTP response for an error Node's HTTP parser raises before there is a request
 * (malformed request line or headers, a negative content-length, a request or header
 * timeout); the connection is closed after it.
 */
export function clientErrorResponse(error: unknown, requestId: string): string {
  const code = (error as { code?: unknown })?.code;
  const apiError = typeof code === 'string' && FASTIFY_CODES[code]
    ? FASTIFY_CODES[code](error)
    : new ApiError(400, 'invalid_request', 'The HTTP request is malformed.');
  return rawErrorResponse(apiError, requestId);
}

/** An error envelope as a whole raw HTTP/1.1 response that closes the connection: for what Node answers before Fastify has a request. */
export function rawErrorResponse(apiError: ApiError, requestId: string): string {
  const body = JSON.stringify(envelope(apiError, requestId));
  return [
    `HTTP/1.1 ${apiError.status} ${HTTP_REASONS[apiError.status] ?? 'Error'}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${requestId}`,
    'connection: close',
    '',
    body,
  ].join('\r\n');
}

@Catch()
export class ErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('HTTP');

  catch(error: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    sendError(http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>(), error, this.logger);
  }
}
