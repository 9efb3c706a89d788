/**
 * Typed errors. The API answers every error as `{ "error": { "code", "message", "request_id", ... } }`;
 * `code` is stable and is what callers branch on, `request_id` the one to quote to support.
 */

/** Base of every error this SDK throws. */
export class MarketplaceError extends Error {
  override name = 'MarketplaceError';
}

/** The API answered an error. */
export class ApiError extends MarketplaceError {
  override name = 'ApiError';
  /** The whole `error` object, with any extra fields (`param`, `scopes`, `price`...). */
  readonly error: Record<string, unknown>;
  readonly param?: string;

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | undefined,
    body: unknown,
    readonly headers: Record<string, string>,
  ) {
    super(message);
    const error = isObject(body) && isObject(body.error) ? body.error : {};
    this.error = error;
    if (typeof error.param === 'string') this.param = error.param;
  }

  /** The same as `requestId`, spelled as the API spells it. */
  get request_id(): string | undefined {
    return this.requestId;
  }

  override toString(): string {
    return `${this.name}: ${this.status} ${this.code}: ${this.message}${this.requestId ? ` (request ${this.requestId})` : ''}`;
  }
}

/** 400: the request was refused; `param` names the field when there is one. */
export class InvalidRequestError extends ApiError {
  override name = 'InvalidRequestError';
}
/** 401: no key, or a malformed, unknown, revoked or expired one. */
export class AuthenticationError extends ApiError {
  override name = 'AuthenticationError';
}
/** 402: `purchase_required` (buy the asset first) or `payment_required`. */
export class PaymentRequiredError extends ApiError {
  override name = 'PaymentRequiredError';
}
/** 403: the key lacks a scope (`scope_required`) or the action is not allowed. */
export class PermissionDeniedError extends ApiError {
  override name = 'PermissionDeniedError';
}
/** 404: no such resource, or another account's (never 403). */
export class NotFoundError extends ApiError {
  override name = 'NotFoundError';
}
/** 409: a concurrent change, or an Idempotency-Key still in use by another request (retried first). */
export class ConflictError extends ApiError {
  override name = 'ConflictError';
}
/** 429: too many requests; retried with backoff before it reaches the caller. */
export class RateLimitError extends ApiError {
  override name = 'RateLimitError';
}
/** 5xx: retried with backoff before it reaches the caller. */
export class ServerError extends ApiError {
  override name = 'ServerError';
}

/** The service could not be reached, the connection broke, or no answer came within the timeout, after every retry. */
export class ConnectionError extends MarketplaceError {
  override name = 'ConnectionError';
  readonly code: string = 'connection_error';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A call took longer than the client's `timeout` (every attempt did). */
export class TimeoutError extends ConnectionError {
  override name = 'TimeoutError';
  override readonly code = 'timeout';
}

/** A downloaded file is not the one published: its size or sha256 differs. Nothing was kept. */
export class ChecksumMismatchError extends MarketplaceError {
  override name = 'ChecksumMismatchError';
  readonly code = 'checksum_mismatch';
  constructor(readonly file: string, readonly expected: string, readonly actual: string) {
    super(`${file}: expected ${expected}, got ${actual}; the download was discarded`);
  }
}

/** An upload did not complete. Parts already landed are kept: call the same upload again to resume. */
export class UploadError extends MarketplaceError {
  override name = 'UploadError';
  constructor(message: string, readonly code: string = 'upload_incomplete', options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A webhook delivery that does not verify: answer it 400. */
export class SignatureVerificationError extends MarketplaceError {
  override name = 'SignatureVerificationError';
  readonly code = 'signature_verification_failed';
}

const BY_STATUS: Record<number, typeof ApiError> = {
  400: InvalidRequestError,
  401: AuthenticationError,
  402: PaymentRequiredError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  429: RateLimitError,
};

/** The typed error of an API answer; an answer without our envelope (a proxy's page) still gets one. */
export function errorFromResponse(status: number, body: unknown, headers: Record<string, string>): ApiError {
  const error = isObject(body) && isObject(body.error) ? body.error : undefined;
  const code = error ? String(error.code || 'unknown_error') : `http_${status}`;
  const message = error ? String(error.message ?? '') : `HTTP ${status} without an error body`;
  const requestId = (error && typeof error.request_id === 'string' ? error.request_id : undefined) ?? headers['x-request-id'];
  const Class = status >= 500 ? ServerError : (BY_STATUS[status] ?? ApiError);
  return new Class(status, code, message, requestId, body, headers);
}

export function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
