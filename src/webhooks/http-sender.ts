import { Pool } from 'undici';
import type { Mode } from '../platform/mode';
import { guardedLookup, literalRefused } from './url-policy';

/** How much of a receiver's answer is read and kept: enough to debug, never a memory risk. */
export const RESPONSE_BODY_CAP = 1024;

/** Keep-alive connections per endpoint origin (and mode). */
const CONNECTIONS_PER_ORIGIN = 64;
/** Origins with a pool kept; past this the least recently used pool is closed. */
const MAX_POOLS = 512;

export interface SendOutcome {
  /** HTTP status when the receiver answered. */
  status?: number;
  error?: string;
  body?: string;
}

/**
 * POSTs one delivery, over a keep-alive connection pool (undici) per origin and mode. No
 * redirect is followed; the whole exchange must finish within timeoutMs; the socket only
 * ever connects to an address the URL policy allows for the mode, checked on the resolved
 * address at connect time (the pool's connector resolves with guardedLookup; an IP literal
 * is never looked up, so it is checked here first). Pools are per mode as well as origin,
 * so a connection a test endpoint opened (to a private address test mode allows) is never
 * reused by a live endpoint of the same origin.
 */
export class HttpSender {
  private readonly pools = new Map<string, Pool>();

  send(options: { url: string; mode: Mode; body: string; headers: Record<string, string>; timeoutMs: number; signal: AbortSignal }): Promise<SendOutcome> {
    const url = new URL(options.url);
    // An IP literal never goes through lookup, so it is checked here.
    const refused = literalRefused(options.mode, url);
    if (refused) return Promise.resolve({ error: refused });
    if (options.mode === 'live' && url.protocol !== 'https:') return Promise.resolve({ error: 'live endpoints must use https' });
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return Promise.resolve({ error: `unsupported protocol ${url.protocol}` });
    if (options.signal.aborted) return Promise.resolve({ error: 'aborted' });
    const pool = this.pool(options.mode, url.origin);

    const abort = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort();
    }, options.timeoutMs);
    const onAbort = () => abort.abort();
    options.signal.addEventListener('abort', onAbort, { once: true });
    const request = async (): Promise<SendOutcome> => {
      const response = await pool.request({
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: { ...options.headers, 'content-length': Buffer.byteLength(options.body).toString() },
        body: options.body,
        signal: abort.signal,
      });
      const chunks: Buffer[] = [];
      let kept = 0;
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        chunks.push(chunk.subarray(0, RESPONSE_BODY_CAP - kept));
        kept += Math.min(chunk.length, RESPONSE_BODY_CAP - kept);
        // The status is known; the rest of a large body is not worth waiting for.
        if (kept >= RESPONSE_BODY_CAP) {
          response.body.destroy();
          break;
        }
      }
      // Postgres text cannot hold NUL: a body with one would make the result unrecordable.
      return { status: response.statusCode, body: Buffer.concat(chunks).toString('utf8').replace(/\u0000/g, '\ufffd') };
    };
    return request()
      .catch((error: Error & { cause?: Error }): SendOutcome => {
        if (timedOut) return { error: `no complete answer within ${options.timeoutMs} ms` };
        // undici wraps connection errors; the cause says what happened (refused address, ECONNREFUSED).
        const cause = error.cause instanceof Error ? error.cause.message : undefined;
        return { error: cause && !error.message.includes(cause) ? `${error.message}: ${cause}` : error.message };
      })
      .finally(() => {
        clearTimeout(timer);
        options.signal.removeEventListener('abort', onAbort);
      });
  }

  private pool(mode: Mode, origin: string): Pool {
    const key = `${mode} ${origin}`;
    let pool = this.pools.get(key);
    if (pool) {
      // Most recently used last.
      this.pools.delete(key);
    } else {
      pool = new Pool(origin, {
        connections: CONNECTIONS_PER_ORIGIN,
        connect: { lookup: guardedLookup(mode) as any },
        keepAliveTimeout: 4_000,
      });
      if (this.pools.size >= MAX_POOLS) {
        const [oldest, old] = this.pools.entries().next().value as [string, Pool];
        this.pools.delete(oldest);
        void old.close().catch(() => undefined);
      }
    }
    this.pools.set(key, pool);
    return pool;
  }

  /** Closes every connection; the sender can be used again (new pools are made). */
  close(): void {
    for (const pool of this.pools.values()) void pool.destroy().catch(() => undefined);
    this.pools.clear();
  }
}
