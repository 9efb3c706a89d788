/**
 * The one error type handlers throw. The exception filter renders it as
 * { error: { code, message, request_id, ...extra } } (spec part 7); `code` is stable.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const Errors = {
  invalidRequest: (message: string) => new ApiError(400, 'invalid_request', message),
  /**
   * One problem, written by hand as `Invalid field "x": what is wrong.`; it also gets the
   * `errors` array every validation_failed answer carries (validation-answer.ts), code `invalid`.
   */
  validationFailed: (message: string) => {
    const named = /^Invalid field "(.+?)": (.*)$/s.exec(message);
    return new ApiError(400, 'validation_failed', message, named ? { errors: [{ field: named[1], code: 'invalid', message }] } : {});
  },
  missingCredentials: () =>
    new ApiError(401, 'missing_credentials', 'Send your API key as "Authorization: Bearer <API_KEY>".', {}, {
      'www-authenticate': 'Bearer',
    }),
  invalidKey: (why: string) => new ApiError(401, 'invalid_key', why, {}, { 'www-authenticate': 'Bearer' }),
  scopeRequired: (scopes: readonly string[]) =>
    new ApiError(
      403,
      'scope_required',
      `This API key lacks the scope this endpoint needs: ${scopes.join(' or ')}.`,
      { scope: scopes[0], scopes },
    ),
  paymentRequired: (message: string) => new ApiError(402, 'payment_required', message),
  /** Transient: the client retries with backoff (spec part 7). */
  serviceUnavailable: (message: string) => new ApiError(503, 'service_unavailable', message),
  notFound: (what: string) => new ApiError(404, 'not_found', `No such ${what}.`),
  conflict: (message = 'A concurrent request changed this resource; retry the request.') =>
    new ApiError(409, 'conflict', message),
  forbidden: (message: string) => new ApiError(403, 'forbidden', message),
} as const;

/** A concurrent change won an optimistic-concurrency race; the request may be retried. Answered 409 conflict. */
export class ConcurrencyConflict extends Error {}

/** A dependency the service cannot answer without (the event store) did not answer. Answered 503 with retry-after. */
export abstract class DependencyUnavailable extends Error {
  /** Named in the answer: "The <dependency> is unavailable". */
  abstract readonly dependency: string;
}


/** What was asked for was deleted for good (an event stream tombstoned): answered 404 not_found, saying so. */
export abstract class ResourceDeleted extends Error {}

/** A write larger than a dependency takes at once (the event store's largest append): answered 413 payload_too_large, saying so. */
export abstract class TooLargeToStore extends Error {
  /** The most bytes the dependency takes. */
  abstract readonly limitBytes: number;
}
