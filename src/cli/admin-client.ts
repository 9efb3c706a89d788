import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

export class CliError extends Error {
  constructor(message: string, readonly code = 'error', readonly exitCode = 1) {
    super(message);
  }
}

/** A client of the operator API under /admin (SVC_URL, ADMIN_TOKEN or DATA_DIR/admin_token). */
export class AdminClient {
  constructor(readonly baseUrl: string, private readonly token: string) {}

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

  async request<T = any>(method: string, route: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}${route}`, {
        method,
        headers: {
          authorization: `Bearer ${this.token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (error) {
      throw new CliError(`cannot reach the service at ${this.baseUrl} (is it running? set SVC_URL): ${(error as Error).message}`, 'unreachable');
    }
    const text = await response.text();
    let parsed: any;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      throw new CliError(`unexpected ${response.status} response from ${this.baseUrl}${route}`, 'bad_response');
    }
    if (!response.ok) {
      const error = parsed?.error;
      throw new CliError(error?.message ?? `HTTP ${response.status}`, error?.code ?? `http_${response.status}`);
    }
    return parsed as T;
  }
}

/** "?a=1&b=2" from the parameters that are set; "" when none is. */
export function query(params: Record<string, string | undefined>): string {
  const pairs = Object.entries(params).filter(([, v]) => v !== undefined) as [string, string][];
  return pairs.length ? `?${new URLSearchParams(pairs)}` : '';
}
