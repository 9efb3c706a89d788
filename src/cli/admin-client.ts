import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

export class CliError extends Error {
  constructor(
    message: string,
    readonly code = 'error',
    readonly exitCode = 1,
    /** The API's request id of the call that failed, printed so the service's logs can be searched for it. */
    readonly requestId?: string,
  ) {
    super(message);
  }
}

/** A client of the operator API under /admin (SVC_URL, ADMIN_TOKEN or DATA_DIR/admin_token). */
export class AdminClient {
  /**
   * The global --idempotency-key: sent on this command's POSTs, the first as given, the nth
   * as "KEY-n", so running the same command again with the same key repeats none of them
   * (each answers its first answer) as long as it makes its POSTs in the same order.
   */
  private idempotency?: { key: string; posts: number };

  constructor(readonly baseUrl: string, private readonly token: string) {}

  withIdempotencyKey(key: string): this {
    this.idempotency = { key, posts: 0 };
    return this;
  }

  private idempotencyHeader(method: string): Record<string, string> {
    if (method !== 'POST' || !this.idempotency) return {};
    const n = ++this.idempotency.posts;
    return { 'idempotency-key': n === 1 ? this.idempotency.key : `${this.idempotency.key}-${n}` };
  }

  /** Names the caller without holding its secret (the CLI's upload resume files). */
  get tokenSha256(): string {
    return createHash('sha256').update(this.token).digest('hex');
  }

  static fromEnvironment(env: NodeJS.ProcessEnv = process.env): AdminClient {
    const baseUrl = (env.SVC_URL || 'http://127.0.0.1:3000').replace(/\/+$/, '');
    let token = env.ADMIN_TOKEN;
    if (!token) {
      const file = path.join(path.resolve(env.DATA_DIR || './data'), 'admin_token');
      if (!fs.existsSync(file)) {
        throw new CliError(`no admin token: set ADMIN_TOKEN or run from the directory whose data dir holds admin_token (${file})`);
      }
      token = fs.readFileSync(file, 'utf8').trim();
    }
    return new AdminClient(baseUrl, token);
  }

  async request<T = any>(method: string, route: string, body?: unknown): Promise<T> {
    let response: Response | undefined;
    // A GET is sent again once on a network failure: a kept-alive socket the server closed as
    // idle (HTTP_IDLE_TIMEOUT_MS) just as a poll reused it fails the request without it being read.
    for (let attempt = 0; !response; attempt++) {
      try {
        response = await fetch(`${this.baseUrl}${route}`, {
          method,
          headers: {
            authorization: `Bearer ${this.token}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            ...this.idempotencyHeader(method),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      } catch (error) {
        if (method === 'GET' && attempt === 0) continue;
        throw new CliError(`cannot reach the service at ${this.baseUrl} (is it running? set SVC_URL): ${(error as Error).message}`, 'unreachable');
      }
    }
    const text = await response.text();
    const headerRequestId = response.headers.get('x-request-id') ?? undefined;
    let parsed: any;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      throw new CliError(`unexpected ${response.status} response from ${this.baseUrl}${route}`, 'bad_response', 1, headerRequestId);
    }
    if (!response.ok) {
      const error = parsed?.error;
      throw new CliError(error?.message ?? `HTTP ${response.status}`, error?.code ?? `http_${response.status}`, 1, error?.request_id ?? headerRequestId);
    }
    return parsed as T;
  }
}

/** "?a=1&b=2" from the parameters that are set; "" when none is. */
export function query(params: Record<string, string | undefined>): string {
  const pairs = Object.entries(params).filter(([, v]) => v !== undefined) as [string, string][];
  return pairs.length ? `?${new URLSearchParams(pairs)}` : '';
}
