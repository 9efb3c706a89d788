import type { TestApp } from '../support/app';
import { recordedOfType } from '../support/events';

const REAL_TIMERS = [
  'hrtime', 'nextTick', 'performance', 'queueMicrotask', 'requestAnimationFrame', 'cancelAnimationFrame', 'requestIdleCallback',
  'cancelIdleCallback', 'setImmediate', 'clearImmediate', 'setInterval', 'clearInterval', 'setTimeout', 'clearTimeout',
] as const;

/** Runs `fn` with only Date moved `offsetMs` ahead; timers keep running so the service does. */
export async function withClockAhead<T>(offsetMs: number, fn: () => Promise<T>): Promise<T> {
  jest.useFakeTimers({ now: Date.now() + offsetMs, doNotFake: [...REAL_TIMERS] });
  try {
    return await fn();
  } finally {
    jest.useRealTimers();
  }
}

/** Past a checkout session's 30 minutes. */
export const PAST_EXPIRY_MS = 31 * 60 * 1000;

/** Path and query of an absolute URL the service handed out, for Fastify inject. */
export const pathOf = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};

/** POST /v1/purchases; returns the response. */
export const openCheckout = (t: TestApp, key: string, body: Record<string, unknown>) => t.request('POST', '/v1/purchases', { key, body });

/** Posts the sandbox's hosted form, as a browser without JavaScript does. */
export const payOnPage = (t: TestApp, checkoutUrl: string, card: string) =>
  t.request('POST', pathOf(checkoutUrl), { payload: `card_number=${encodeURIComponent(card)}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });

export const PAYS = '4242424242424242';
export const DECLINES = '4000000000000002';
/** Pays, then the buyer's bank disputes the payment (as Stripe's test card of that number). */
export const DISPUTED = '4000000000000259';

/** Opens a checkout for the asset and pays it with the card (the one that pays by default); returns the session. */
export async function buy(t: TestApp, key: string, asset: string, card = PAYS) {
  const session = await openCheckout(t, key, { asset });
  if (session.status !== 201) throw new Error(`checkout failed: ${session.text}`);
  const paid = await payOnPage(t, session.body.checkout_url, card);
  if (paid.status !== 200) throw new Error(`payment failed: ${paid.status} ${paid.text}`);
  return session.body;
}

/** The recorded events of one type on checkout and ledger streams. */
export async function eventsOfType(t: TestApp, type: string): Promise<{ stream_id: string; data: any }[]> {
  return recordedOfType(t, type);
}
