import { randomBytes } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

/**
 * A stand-in for api.stripe.com on 127.0.0.1, answering the calls StripeProcessor makes
 * (POST /v1/checkout/sessions, POST /v1/refunds, POST /v1/transfers, GET /v1/payment_intents/{id},
 * GET /v1/balance_transactions) in Stripe's wire format, so the tests
 * drive the real SDK: its form encoding, headers, retries and error classes.
 */

export interface RecordedRequest {
  method: string;
  path: string;
  /** The form body, nested as Stripe reads it; values stay strings, as on the wire. */
  body: Record<string, any>;
  headers: http.IncomingHttpHeaders;
}

type StripeObject = Record<string, any>;
type ErrorBody = { type: string; message: string; code?: string; param?: string };

interface PaymentIntent {
  id: string;
  amount: number;
  currency: string;
  charge: string;
  /** The charge's balance transaction: Stripe's fee on it. */
  balanceTransaction: { id: string; fee: number };
  /** Refunds of parts of the charge, newest first. */
  parts?: StripeObject[];
  livemode: boolean;
  refund?: StripeObject;
}

export interface StripeServer {
  url: string;
  requests: RecordedRequest[];
  /** What POST /v1/refunds reports: settled at once, confirmed later by charge.refunded, or refused. */
  refundStatus: 'succeeded' | 'pending' | 'failed';
  /** Connect accounts that can receive transfers. */
  connectedAccounts: Set<string>;
  /** How many of the next POST /v1/transfers fail with a 500 (Stripe's side broke; the outcome is open). */
  transferOutages: number;
  /** Transfers made, by id: each moved money once. */
  transfers: Map<string, StripeObject>;
  /** Stripe's own books: a balance transaction for every charge (with its fee), refund and transfer. */
  balanceTransactions: StripeObject[];
  /** The session as Stripe holds it, by its cs_ id. */
  session(id: string): StripeObject;
  /** The buyer finished Stripe's page: the session completes with a new PaymentIntent. */
  completeSession(id: string, paymentStatus?: 'paid' | 'unpaid'): StripeObject;
  /** A pending refund goes through; returns the charge.refunded event. */
  settleRefund(paymentIntentId: string): StripeObject;
  /** Part of the charge is refunded (from Stripe's dashboard, say); returns the charge.refunded event, refunded false until all of it is. */
  refundPart(paymentIntentId: string, amount: number): StripeObject;
  /** The charge.refunded event Stripe sends after refunds made through the API: the charge with every refund so far. */
  chargeRefunded(paymentIntentId: string): StripeObject;
  /** The buyer's bank disputes the payment: Stripe withdraws it and the dispute fee; returns charge.dispute.created. */
  openDispute(paymentIntentId: string): StripeObject;
  /** The dispute is settled (won: the amount, not the fee, comes back); returns charge.dispute.closed. */
  closeDispute(disputeId: string, status: 'won' | 'lost' | 'warning_closed'): StripeObject;
  close(): Promise<void>;
}

const randomId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

/** What Stripe charges for a dispute (US): 15 dollars, kept whatever the outcome. */
export const STRIPE_DISPUTE_FEE = 1500;

/** Stripe's standard card pricing: 2.9% (rounded half up) + 30 cents. */
export const stripeFee = (amount: number) => Math.floor((amount * 290 + 5000) / 10000) + 30;
const now = () => Math.floor(Date.now() / 1000);

/** Stripe's form encoding (a[b][0][c]=v) back into objects and arrays. */
export function parseForm(text: string): Record<string, any> {
  const root: Record<string, any> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const path = key.split(/[[\]]+/).filter(Boolean);
    let node: any = root;
    path.forEach((segment, i) => {
      if (i === path.length - 1) node[segment] = value;
      else node = node[segment] ??= /^\d+$/.test(path[i + 1]) ? [] : {};
    });
  }
  return root;
}

/** An event as Stripe posts it to a webhook endpoint. */
export function stripeEvent(type: string, object: StripeObject, livemode = Boolean(object.livemode)): StripeObject {
  return {
    id: randomId('evt'),
    object: 'event',
    api_version: Stripe.API_VERSION,
    created: now(),
    data: { object },
    livemode,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  };
}

export const checkoutCompletedEvent = (session: StripeObject, livemode?: boolean) => stripeEvent('checkout.session.completed', session, livemode);

/** The Stripe-Signature header, made by the SDK itself; an old `timestamp` (seconds) makes a stale one. */
export const sign = (payload: string, secret: string, timestamp?: number) =>
  Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp });

/** `secretKeys`: the API keys this account accepts; sk_live_ ones act in live mode. */
export async function startStripeServer(secretKeys: string[]): Promise<StripeServer> {
  const requests: RecordedRequest[] = [];
  const sessions = new Map<string, StripeObject>();
  const intents = new Map<string, PaymentIntent>();
  const replays = new Map<string, { request: string; status: number; body: StripeObject }>();

  const invalid = (message: string, extra: Partial<ErrorBody> = {}): [number, { error: ErrorBody }] => [
    400,
    { error: { type: 'invalid_request_error', message, ...extra } },
  ];

  function createSession(body: Record<string, any>, livemode: boolean): [number, StripeObject] {
    if (body.mode !== 'payment') return invalid('Missing required param: mode.', { code: 'parameter_missing', param: 'mode' });
    const items: any[] = body.line_items ?? [];
    const prices = items.map((item) => item.price_data);
    if (!items.length || prices.some((p) => !p?.currency || !/^\d+$/.test(p.unit_amount ?? ''))) {
      return invalid('Each line item needs price_data with a currency and an integer unit_amount.', { code: 'parameter_missing', param: 'line_items' });
    }
    // Stripe's own window for expires_at: 30 minutes to 24 hours from creation.
    const expiresAt = Number(body.expires_at ?? now() + 86_400);
    if (expiresAt < now() + 1800 || expiresAt > now() + 86_400) {
      return invalid('The `expires_at` timestamp must be between 30 minutes and 24 hours from Checkout Session creation.', { param: 'expires_at' });
    }
    const amount = items.reduce((sum, item) => sum + Number(item.price_data.unit_amount) * Number(item.quantity ?? 1), 0);
    const id = randomId(livemode ? 'cs_live' : 'cs_test');
    const session = {
      id,
      object: 'checkout.session',
      amount_subtotal: amount,
      amount_total: amount,
      cancel_url: body.cancel_url ?? null,
      client_reference_id: body.client_reference_id ?? null,
      created: now(),
      currency: prices[0].currency.toLowerCase(),
      customer: null,
      expires_at: expiresAt,
      livemode,
      metadata: body.metadata ?? {},
      mode: 'payment',
      payment_intent: null,
      payment_status: 'unpaid',
      status: 'open',
      success_url: body.success_url ?? null,
      url: `https://checkout.stripe.com/c/pay/${id}`,
    };
    sessions.set(id, session);
    return [200, session];
  }

  function createRefund(body: Record<string, any>): [number, StripeObject] {
    const intent = intents.get(body.payment_intent ?? '');
    if (!intent) {
      return invalid(`No such payment_intent: '${body.payment_intent}'`, { code: 'resource_missing', param: 'payment_intent' });
    }
    if (intent.refund) return invalid(`Charge ${intent.charge} has already been refunded.`, { code: 'charge_already_refunded' });
    // Without an amount, Stripe refunds what is left of the charge.
    const left = intent.amount - (intent.parts ?? []).reduce((sum, r) => sum + r.amount, 0);
    if (body.amount !== undefined) {
      const amount = Number(body.amount);
      if (!(amount >= 1 && amount <= left)) {
        return invalid(`Refund amount ($${(amount / 100).toFixed(2)}) is greater than unrefunded amount on charge ($${(left / 100).toFixed(2)})`, { code: 'amount_too_large', param: 'amount' });
      }
      if (amount < left) {
        // A part: the charge stays partly refunded; the whole-refund slot stays free for the rest.
        const part = { id: randomId('re'), object: 'refund', amount, balance_transaction: randomId('txn'), charge: intent.charge, created: now(), currency: intent.currency, metadata: {}, payment_intent: intent.id, reason: null, status: server.refundStatus };
        intent.parts = [part, ...(intent.parts ?? [])];
        if (server.refundStatus !== 'failed') record('refund', -amount, 0, intent.currency, part.id, intent.livemode, part.balance_transaction);
        return [200, part];
      }
    }
    intent.refund = {
      id: randomId('re'),
      object: 'refund',
      amount: left,
      balance_transaction: randomId('txn'),
      charge: intent.charge,
      created: now(),
      currency: intent.currency,
      metadata: {},
      payment_intent: intent.id,
      reason: null,
      status: server.refundStatus,
    };
    if (server.refundStatus !== 'failed') record('refund', -left, 0, intent.currency, intent.refund.id, intent.livemode, intent.refund.balance_transaction);
    return [200, intent.refund];
  }

  function createTransfer(body: Record<string, any>, livemode: boolean): [number, StripeObject] {
    if (server.transferOutages > 0) {
      server.transferOutages--;
      return [500, { error: { type: 'api_error', message: 'An unknown error occurred.' } }];
    }
    if (!server.connectedAccounts.has(body.destination)) {
      return invalid(`No such destination: '${body.destination}'`, { code: 'resource_missing', param: 'destination' });
    }
    const transfer = {
      id: randomId('tr'),
      object: 'transfer',
      amount: Number(body.amount),
      currency: body.currency,
      created: now(),
      destination: body.destination,
      livemode,
      metadata: body.metadata ?? {},
      reversed: false,
    };
    server.transfers.set(transfer.id, transfer);
    record('transfer', -transfer.amount, 0, transfer.currency, transfer.id, livemode);
    return [200, transfer];
  }

  /** GET /v1/payment_intents/{id}, its latest charge and that charge's balance transaction expanded when asked. */
  function retrieveIntent(id: string, body: Record<string, any>): [number, StripeObject] {
    const intent = intents.get(id);
    if (!intent) return [404, { error: { type: 'invalid_request_error', message: `No such payment_intent: '${id}'`, code: 'resource_missing', param: 'intent' } }];
    const expand: string[] = body.expand ?? [];
    const balanceTransaction = {
      id: intent.balanceTransaction.id,
      object: 'balance_transaction',
      amount: intent.amount,
      currency: intent.currency,
      fee: intent.balanceTransaction.fee,
      net: intent.amount - intent.balanceTransaction.fee,
      type: 'charge',
      source: intent.charge,
    };
    const charge = {
      id: intent.charge,
      object: 'charge',
      amount: intent.amount,
      currency: intent.currency,
      payment_intent: intent.id,
      balance_transaction: expand.includes('latest_charge.balance_transaction') ? balanceTransaction : balanceTransaction.id,
    };
    return [
      200,
      {
        id: intent.id,
        object: 'payment_intent',
        amount: intent.amount,
        currency: intent.currency,
        livemode: intent.livemode,
        status: 'succeeded',
        latest_charge: expand.some((e) => e.startsWith('latest_charge')) ? charge : intent.charge,
      },
    ];
  }

  const disputes = new Map<string, StripeObject>();

  function record(type: string, amount: number, fee: number, currency: string, source: string, livemode: boolean, id = randomId('txn'), reportingCategory = type) {
    const bt = { id, object: 'balance_transaction', type, reporting_category: reportingCategory, amount, fee, net: amount - fee, currency, created: now(), source, livemode };
    server.balanceTransactions.push(bt);
    return bt;
  }

  /** GET /v1/balance_transactions: newest first, created[gte|lt], starting_after, limit; expand[]=data.source. */
  function listBalanceTransactions(body: Record<string, any>, livemode: boolean): [number, StripeObject] {
    const created = body.created ?? {};
    let all = server.balanceTransactions
      .filter((bt) => bt.livemode === livemode)
      .filter((bt) => (created.gte === undefined || bt.created >= Number(created.gte)) && (created.lt === undefined || bt.created < Number(created.lt)))
      .reverse();
    if (body.starting_after) all = all.slice(all.findIndex((bt) => bt.id === body.starting_after) + 1);
    const limit = Number(body.limit ?? 10);
    const page = all.slice(0, limit);
    const expand = (body.expand ?? []).includes('data.source');
    const sourceOf = (bt: StripeObject) => {
      if (!expand) return bt.source;
      if (bt.type === 'charge') {
        const intent = [...intents.values()].find((i) => i.charge === bt.source);
        return { id: bt.source, object: 'charge', payment_intent: intent?.id ?? null };
      }
      return { id: bt.source, object: bt.type };
    };
    const data = page.map(({ livemode: _, ...bt }) => ({ ...bt, source: sourceOf({ ...bt }) }));
    return [200, { object: 'list', data, has_more: all.length > limit, url: '/v1/balance_transactions' }];
  }

  function route(method: string, path: string, body: Record<string, any>, livemode: boolean): [number, StripeObject] {
    if (method === 'GET' && path === '/v1/balance_transactions') return listBalanceTransactions(body, livemode);
    const intent = /^\/v1\/payment_intents\/([^/]+)$/.exec(path);
    if (method === 'GET' && intent) return retrieveIntent(decodeURIComponent(intent[1]), body);
    if (method === 'POST' && path === '/v1/checkout/sessions') return createSession(body, livemode);
    if (method === 'POST' && path === '/v1/refunds') return createRefund(body);
    if (method === 'POST' && path === '/v1/transfers') return createTransfer(body, livemode);
    return [404, { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${path}).` } }];
  }

  const httpServer = http.createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      const [path, query = ''] = (req.url ?? '').split('?');
      // A GET carries its parameters (expand[]) in the query string.
      const body = parseForm(req.method === 'GET' ? query : text);
      requests.push({ method: req.method ?? '', path, body, headers: req.headers });
      const send = (status: number, payload: StripeObject, replayed = false) => {
        res.writeHead(status, {
          'content-type': 'application/json',
          'request-id': randomId('req'),
          'stripe-version': String(req.headers['stripe-version'] ?? Stripe.API_VERSION),
          ...(replayed ? { 'idempotent-replayed': 'true' } : {}),
        });
        res.end(JSON.stringify(payload));
      };

      const apiKey = /^Bearer (.*)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
      if (!secretKeys.includes(apiKey)) {
        return send(401, { error: { type: 'invalid_request_error', message: `Invalid API Key provided: ${apiKey.slice(0, 8)}****${apiKey.slice(-4)}` } });
      }
      // Stripe scopes idempotency keys to the account (here: the secret key).
      const key = req.headers['idempotency-key'] && `${apiKey} ${req.headers['idempotency-key']}`;
      const request = `${req.method} ${path} ${text}`;
      const earlier = key ? replays.get(key) : undefined;
      if (earlier && earlier.request !== request) {
        return send(400, {
          error: { type: 'idempotency_error', message: `Keys for idempotent requests can only be used with the same parameters they were first used with.` },
        });
      }
      if (earlier) return send(earlier.status, earlier.body, true);
      const [status, payload] = route(req.method ?? '', path, body, apiKey.startsWith('sk_live_'));
      // Stripe does not keep a 500 under the key: the retry runs the request anew.
      if (key && status < 500) replays.set(key, { request, status, body: payload });
      send(status, payload);
    });
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));

  const server: StripeServer = {
    url: `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`,
    requests,
    refundStatus: 'succeeded',
    connectedAccounts: new Set(),
    transferOutages: 0,
    transfers: new Map(),
    balanceTransactions: [],
    session(id) {
      const session = sessions.get(id);
      if (!session) throw new Error(`no Stripe checkout session ${id}`);
      return session;
    },
    completeSession(id, paymentStatus = 'paid') {
      const session = server.session(id);
      const intent: PaymentIntent = {
        id: randomId('pi'),
        amount: session.amount_total,
        currency: session.currency,
        charge: randomId('ch'),
        balanceTransaction: { id: randomId('txn'), fee: stripeFee(session.amount_total) },
        livemode: session.livemode,
      };
      intents.set(intent.id, intent);
      if (paymentStatus === 'paid') {
        record('charge', intent.amount, intent.balanceTransaction.fee, intent.currency, intent.charge, intent.livemode, intent.balanceTransaction.id);
      }
      return { ...Object.assign(session, { status: 'complete', payment_status: paymentStatus, payment_intent: intent.id }) };
    },
    settleRefund(paymentIntentId) {
      const intent = intents.get(paymentIntentId);
      if (!intent?.refund) throw new Error(`no refund of ${paymentIntentId}`);
      intent.refund.status = 'succeeded';
      return stripeEvent('charge.refunded', {
        id: intent.charge,
        object: 'charge',
        amount: intent.amount,
        amount_captured: intent.amount,
        amount_refunded: intent.amount,
        currency: intent.currency,
        livemode: intent.livemode,
        paid: true,
        payment_intent: intent.id,
        refunded: true,
        refunds: { object: 'list', data: [intent.refund], has_more: false, total_count: 1, url: `/v1/charges/${intent.charge}/refunds` },
        status: 'succeeded',
      });
    },
    refundPart(paymentIntentId, amount) {
      const intent = intents.get(paymentIntentId);
      if (!intent) throw new Error(`no payment ${paymentIntentId}`);
      const refund = { id: randomId('re'), object: 'refund', amount, balance_transaction: randomId('txn'), charge: intent.charge, currency: intent.currency, payment_intent: intent.id, status: 'succeeded' };
      intent.parts = [refund, ...(intent.parts ?? [])];
      record('refund', -amount, 0, intent.currency, refund.id, intent.livemode, refund.balance_transaction);
      return server.chargeRefunded(paymentIntentId);
    },
    chargeRefunded(paymentIntentId) {
      const intent = intents.get(paymentIntentId);
      if (!intent) throw new Error(`no payment ${paymentIntentId}`);
      const refunds = [...(intent.refund ? [intent.refund] : []), ...(intent.parts ?? [])].filter((r) => r.status === 'succeeded');
      const refunded = refunds.reduce((sum, r) => sum + r.amount, 0);
      return stripeEvent('charge.refunded', {
        id: intent.charge,
        object: 'charge',
        amount: intent.amount,
        amount_captured: intent.amount,
        amount_refunded: refunded,
        currency: intent.currency,
        livemode: intent.livemode,
        paid: true,
        payment_intent: intent.id,
        refunded: refunded >= intent.amount,
        refunds: { object: 'list', data: refunds, has_more: false, total_count: refunds.length, url: `/v1/charges/${intent.charge}/refunds` },
        status: 'succeeded',
      });
    },
    openDispute(paymentIntentId) {
      const intent = intents.get(paymentIntentId);
      if (!intent) throw new Error(`no payment ${paymentIntentId}`);
      const id = randomId('dp');
      const { livemode: _, ...withdrawal } = record('adjustment', -intent.amount, STRIPE_DISPUTE_FEE, intent.currency, id, intent.livemode, randomId('txn'), 'dispute');
      const dispute = {
        id,
        object: 'dispute',
        amount: intent.amount,
        balance_transactions: [withdrawal],
        charge: intent.charge,
        currency: intent.currency,
        livemode: intent.livemode,
        payment_intent: intent.id,
        reason: 'fraudulent',
        status: 'needs_response',
      };
      disputes.set(id, dispute);
      return stripeEvent('charge.dispute.created', { ...dispute });
    },
    closeDispute(disputeId, status) {
      const dispute = disputes.get(disputeId);
      if (!dispute) throw new Error(`no dispute ${disputeId}`);
      dispute.status = status;
      if (status === 'won') {
        const { livemode: _, ...reversal } = record('adjustment', dispute.amount, 0, dispute.currency, disputeId, dispute.livemode, randomId('txn'), 'dispute_reversal');
        dispute.balance_transactions = [...dispute.balance_transactions, reversal];
      }
      return stripeEvent('charge.dispute.closed', { ...dispute });
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        // The SDK keeps sockets alive; without this close() would wait for them to idle out.
        httpServer.closeAllConnections();
        httpServer.close((error) => (error ? reject(error) : resolve()));
      }),
  };
  return server;
}
