import * as http from 'node:http';
import * as https from 'node:https';
import type { Mode } from '../platform/mode';
import { guardedLookup, literalRefused } from './url-policy';

/** How much of a receiver's answer is read and kept: enough to debug, never a memory risk. */
export const RESPONSE_BODY_CAP = 1024;

export interface SendOutcome {
  /** HTTP status when the receiver answered. */
  status?: number;
  error?: string;
  body?: string;
}

/**
 * POSTs one delivery. No redirect is followed (node:http never does); the whole exchange
 * must finish within timeoutMs; the socket only ever connects to an address the URL policy
 * allows for the mode, checked on the resolved address at connect time.
 */
export class HttpSender {
  private readonly agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: 32 }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: 32 }),
  };

  send(options: { url: string; mode: Mode; body: string; headers: Record<string, string>; timeoutMs: number; signal: AbortSignal }): Promise<SendOutcome> {
    const url = new URL(options.url);
    // An IP literal never goes through lookup, so it is checked here.
    const refused = literalRefused(options.mode, url);
    if (refused) return Promise.resolve({ error: refused });
    if (options.mode === 'live' && url.protocol !== 'https:') return Promise.resolve({ error: 'live endpoints must use https' });
    const transport = url.protocol === 'https:' ? https : http;
    const agent = this.agents[url.protocol as 'http:' | 'https:'];
    if (!agent) return Promise.resolve({ error: `unsupported protocol ${url.protocol}` });

    return new Promise<SendOutcome>((resolve) => {
      let settled = false;
      const finish = (outcome: SendOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(outcome);
      };
      const request = transport.request(url, {
        method: 'POST',
        agent,
        lookup: guardedLookup(options.mode) as any,
        signal: options.signal,
        headers: { ...options.headers, 'content-length': Buffer.byteLength(options.body).toString() },
      });
      const timer = setTimeout(() => {
        finish({ error: `no complete answer within ${options.timeoutMs} ms` });
        request.destroy();
      }, options.timeoutMs);
      request.on('error', (error) => finish({ error: error.message }));
      request.on('response', (response) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        const done = () => finish({ status: response.statusCode, body: Buffer.concat(chunks).toString('utf8') });
        response.on('data', (chunk: Buffer) => {
          if (kept < RESPONSE_BODY_CAP) {
            chunks.push(chunk.subarray(0, RESPONSE_BODY_CAP - kept));
            kept += Math.min(chunk.length, RESPONSE_BODY_CAP - kept);
            return;
          }
          // The status is known; the rest of a large body is not worth waiting for.
          done();
          response.destroy();
        });
        response.on('end', done);
        response.on('error', done);
      });
      request.end(options.body);
    });
  }

  close(): void {
    this.agents['http:'].destroy();
    this.agents['https:'].destroy();
  }
}
