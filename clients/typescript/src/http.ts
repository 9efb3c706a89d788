/**
 * One API call: JSON in and out, the API key, one Idempotency-Key per call on POST (the same
 * for all its attempts, as stripe-node sends), a timeout per attempt, and retries with
 * backoff on what a retry can fix: network errors and timeouts, 409 idempotency_key_in_use,
 * 429 and 5xx.
 */
import { createHash, randomUUID } from 'node:crypto';
import { ApiError, ConnectionError, MarketplaceError, TimeoutError, errorFromResponse } from './errors';
import { VERSION } from './version';

export type Query = Record<string, string | number | boolean | null | undefined>;

export interface RequestOptions {
  /** Sent as the Idempotency-Key of a POST instead of one generated for the call. */
  idempotencyKey?: string;
  /** This call's timeout per attempt, in milliseconds (default: the client's). */
  timeout?: number;
  /** Abandons the call (no retry follows). */
  signal?: AbortSignal;
}

/** Whether the same request, sent again, may succeed: never a refusal of the request itself. */
export function retryable(error: unknown): boolean {
  if (error instanceof ApiError) {
    if (error.status === 409) return error.code === 'idempotency_key_in_use';
    return error.status === 429 || error.status >= 500;
  }
  return error instanceof ConnectionError;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Exponential backoff with jitter: 0.5 s, 1 s, 2 s... capped at 8 s; a Retry-After up to 20 s wins. */
export class Retrying {
  constructor(
    readonly maxRetries = 3,
    readonly initialDelayMs = 500,
    readonly maxDelayMs = 8000,
  ) {}

  delay(attempt: number, error: unknown): number {
    if (error instanceof ApiError) {
      const after = error.headers['retry-after'];
      if (after && /^\d+$/.test(after) && Number(after) <= 20) return Number(after) * 1000;
    }
    return Math.min(this.maxDelayMs, this.initialDelayMs * 2 ** attempt) * (0.5 + Math.random() / 2);
  }

  async run<T>(call: (attempt: number) => Promise<T>, signal?: AbortSignal): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await call(attempt);
      } catch (error) {
        if (attempt >= this.maxRetries || !retryable(error) || signal?.aborted) throw error;
        await sleep(this.delay(attempt, error));
      }
    }
  }
}

/**
 * A network failure of fetch (refused, reset, DNS, a timeout) as the SDK's ConnectionError,
 * which the retries take; anything else as it is.
 */
export function asConnectionError(error: unknown, what: string, timeoutMs: number, signal?: AbortSignal): unknown {
  if (error instanceof MarketplaceError) return error;
  if (signal?.aborted) return error;
  const e = error as Error & { cause?: Error & { code?: string } };
  if (e?.name === 'TimeoutError') return new TimeoutError(`${what}: no answer within ${timeoutMs / 1000} s`, { cause: error });
  if (e?.name === 'TypeError' || e?.name === 'AbortError' || (e as { code?: string })?.code || e?.cause) {
    const why = e.cause?.code ?? e.cause?.message ?? e.message;
    return new ConnectionError(`${what}: the service could not be reached (${why})`, { cause: error });
  }
  return error;
}

export function headersOf(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, key) => (out[key.toLowerCase()] = value));
  return out;
}

/** Sends API requests to `baseUrl` (the service's root; a trailing `/v1` is accepted). */
export class Transport {
  readonly baseUrl: string;

  constructor(
    readonly apiKey: string,
    baseUrl: string,
    readonly timeoutMs: number,
    readonly retrying: Retrying,
  ) {
    if (!apiKey) throw new MarketplaceError('an API key is needed: pass apiKey or set SVC_API_KEY');
    const base = baseUrl.replace(/\/+$/, '');
    this.baseUrl = base.endsWith('/v1') ? base.slice(0, -3) : base;
  }

  /** Names the caller without holding its key (the uploader's state files). */
  get keySha256(): string {
    return createHash('sha256').update(this.apiKey).digest('hex');
  }

  /** The answer's JSON, typed by the caller. */
  async request<T = any>(method: string, path: string, body?: unknown, query?: Query, options: RequestOptions = {}): Promise<T> {
    const url = new URL(this.baseUrl + path);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(key, String(value));
    }
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.apiKey}`,
      accept: 'application/json',
      'user-agent': `robotics-marketplace-node/${VERSION}`,
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    // One key for every attempt of this call: a retry of a POST that did reach the service is answered, not done twice.
    if (method === 'POST') headers['idempotency-key'] = options.idempotencyKey ?? randomUUID();
    const data = body === undefined ? undefined : JSON.stringify(body);
    const timeoutMs = options.timeout ?? this.timeoutMs;
    return this.retrying.run(async () => {
      const signal = options.signal ? AbortSignal.any([options.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
      let text: string;
      let response: Response;
      try {
        response = await fetch(url, { method, headers, body: data, signal });
        text = await response.text();
      } catch (error) {
        throw asConnectionError(error, `${method} ${path}`, timeoutMs, options.signal);
      }
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      if (response.status >= 400) throw errorFromResponse(response.status, parsed, headersOf(response.headers));
      return parsed as T;
    }, options.signal);
  }
}
