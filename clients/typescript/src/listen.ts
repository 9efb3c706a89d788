/**
 * `robomarket listen --forward-to URL`: the account's events, read from `GET /v1/events` with the
 * API key alone (no operator token, no endpoint registered, the service may be remote), each
 * forwarded once to a local URL, signed with a local secret as the service signs deliveries
 * (`svc-signature: t=...,v1=...`), so the receiver verifies it with `constructEvent`.
 *
 * Which events: those created after it started (the newest events already listed at start are
 * remembered and never forwarded), or from `since` on. The list is asked for with
 * `created[gte]` = a floor that follows the newest event seen, less a window: an event that
 * becomes visible late (a transaction committed after a newer one) is still listed, and the ids
 * seen inside the window are remembered, so nothing is forwarded twice.
 */
import { randomBytes } from 'node:crypto';
import type { Marketplace } from './client';
import { ApiError } from './errors';
import { SIGNATURE_HEADER, sign } from './webhooks';
import { VERSION } from './version';

/** How far below the newest event seen the list keeps asking, in seconds. */
export const LISTEN_WINDOW_SECONDS = 120;

export interface ListenOptions {
  forwardTo: string;
  /** Event types to forward (all when empty). */
  events?: string[];
  /** Unix seconds: forward the events created from then on, past ones included. */
  since?: number;
  /** The signing secret; a new `whsec_...` when not given. */
  secret?: string;
  /** Seconds between two polls. */
  interval: number;
  /** Each forward's timeout, in ms. */
  timeout?: number;
  /** Told once ready (the secret), then of each forward. */
  onReady(info: { secret: string; forward_to: string; since: number | null }): void;
  onForward(result: { id: string; type: string; created: number; status: number | null; error?: string; ms: number }): void;
  /** A poll that failed with a retryable error after the SDK's retries: polling goes on. */
  onPollError(error: unknown): void;
  /** Stops the loop. */
  signal: AbortSignal;
}

interface Listed {
  id: string;
  type: string;
  created: number;
  [field: string]: unknown;
}

export const newListenSecret = () => `whsec_listen_${randomBytes(24).toString('base64url')}`;

/** Runs until `signal` aborts; throws on a refusal that polling again cannot fix (401, 403, 400). */
export async function listen(client: Marketplace, options: ListenOptions): Promise<void> {
  const secret = options.secret ?? newListenSecret();
  const type = options.events?.length ? options.events.join(',') : undefined;
  const seen = new Map<string, number>();
  let floor: number;
  if (options.since !== undefined) {
    floor = options.since;
  } else {
    // Everything already there is the past: the newest second listed now, and all of it, is remembered.
    // The service's clock decides (not ours), so a remote service with a skewed clock loses nothing.
    floor = 0;
    for await (const event of client.events.list({ type, limit: 100 } as never) as AsyncIterable<Listed>) {
      if (seen.size && event.created < floor) break;
      floor = Math.max(floor, event.created);
      seen.set(event.id, event.created);
    }
  }
  options.onReady({ secret, forward_to: options.forwardTo, since: options.since ?? null });

  while (!options.signal.aborted) {
    let listed: Listed[] = [];
    try {
      const query = { type, limit: 100, 'created[gte]': floor } as never;
      listed = (await client.events.list(query).toArray()) as Listed[];
    } catch (error) {
      if (options.signal.aborted) return;
      if (error instanceof ApiError && error.status < 500 && error.status !== 429 && error.status !== 409) throw error;
      options.onPollError(error);
    }
    // Newest first from the API: forwarded oldest first.
    const fresh = listed.filter((e) => !seen.has(e.id)).sort((a, b) => a.created - b.created);
    for (const event of fresh) {
      if (options.signal.aborted) return;
      seen.set(event.id, event.created);
      options.onForward(await forward(event, secret, options));
    }
    const newest = Math.max(floor, ...[...seen.values()]);
    const next = Math.max(floor, newest - LISTEN_WINDOW_SECONDS);
    if (next > floor) {
      floor = next;
      for (const [id, created] of seen) if (created < floor) seen.delete(id);
    }
    await pause(options.interval * 1000, options.signal);
  }
}

/** POSTs the event as a delivery body (`{ id, type, created, data, ... }`), signed; the receiver's status. */
async function forward(event: Listed, secret: string, options: ListenOptions) {
  const { object: _object, ...delivery } = event;
  const body = JSON.stringify(delivery);
  const started = Date.now();
  const result = { id: event.id, type: event.type, created: event.created };
  try {
    const res = await fetch(options.forwardTo, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: sign(body, secret), 'user-agent': `robomarket-listen/${VERSION}` },
      body,
      signal: AbortSignal.any([options.signal, AbortSignal.timeout(options.timeout ?? 30_000)]),
    });
    await res.arrayBuffer().catch(() => undefined);
    return { ...result, status: res.status, ms: Date.now() - started };
  } catch (error) {
    const e = error as Error & { cause?: { code?: string; message?: string } };
    return { ...result, status: null, error: e.cause?.code ?? e.cause?.message ?? e.message, ms: Date.now() - started };
  }
}

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}
