import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { publishModel } from '../catalog/catalog-client';
import { STRIPE_EVENT_MAX_BYTES } from '../../src/commerce/stripe-webhook.controller';
import { LedgerAudit } from '../../src/ledger/ledger-audit';
import { eventsOfType, openCheckout, PAST_EXPIRY_MS, withClockAhead } from '../commerce/commerce-client';
import { stallProjections } from '../support/stalled-projections';
import { startTestApp } from '../support/app';
import { checkoutCompletedEvent, stripeFee, sign, startStripeServer, StripeServer, stripeEvent } from './stripe-server';

const STRIPE = {
  test: { secretKey: 'sk_test_51PaymentsSuiteTestKey', webhookSecret: 'whsec_test_payments_suite' },
  live: { secretKey: 'sk_live_51PaymentsSuiteLiveKey', webhookSecret: 'whsec_live_payments_suite' },
} as const;
type Mode = keyof typeof STRIPE;

describe('payments through Stripe (the real SDK against a local Stripe stand-in)', () => {
  let stripe: StripeServer;
  let t: Awaited<ReturnType<typeof startTestApp>>;
  const accounts = {} as Record<Mode, { seller: { accountId: string; key: string }; buyer: { accountId: string; key: string } }>;

  beforeAll(async () => {
    stripe = await startStripeServer([STRIPE.test.secretKey, STRIPE.live.secretKey]);
    t = await startTestApp({
      env: {
        PAYMENTS: 'stripe',
        STRIPE_SECRET_KEY_TEST: STRIPE.test.secretKey,
        STRIPE_WEBHOOK_SECRET_TEST: STRIPE.test.webhookSecret,
        STRIPE_SECRET_KEY_LIVE: STRIPE.live.secretKey,
        STRIPE_WEBHOOK_SECRET_LIVE: STRIPE.live.webhookSecret,
        STRIPE_API_BASE: stripe.url,
      },
    });
    for (const mode of ['test', 'live'] as const) {
      accounts[mode] = {
        seller: await t.accountWithKey({ mode, name: `Seller ${mode}` }),
        buyer: await t.accountWithKey({ mode, name: `Buyer ${mode}`, scopes: ['models:read'] }),
      };
    }
  });
  afterAll(async () => {
    await t?.close();
    await stripe?.close();
  });
  beforeEach(() => {
    stripe.refundStatus = 'succeeded';
  });

  /** Posts an event as Stripe does: the exact bytes it signed, as JSON. */
  const deliver = (mode: string, payload: string, signature?: string) =>
    t.request('POST', `/webhooks/stripe/${mode}`, {
      payload,
      headers: { 'content-type': 'application/json; charset=utf-8', ...(signature === undefined ? {} : { 'stripe-signature': signature }) },
    });
  const deliverSigned = (mode: Mode, event: object) => {
    const payload = JSON.stringify(event);
    return deliver(mode, payload, sign(payload, STRIPE[mode].webhookSecret));
  };

  const download = (key: string, modelId: string) => t.request('POST', `/v1/models/${modelId}/download`, { key });
  const countOf = async (type: string, field: string, value: string) => (await eventsOfType(t, type)).filter((e) => e.data[field] === value).length;
  const totalEvents = async () => Number((await t.db.query<{ n: string }>('SELECT count(*) AS n FROM events')).rows[0].n);

  /** A paid model of the mode's seller and an open checkout for it; `stripeSession` is Stripe's side. */
  async function openStripeCheckout(mode: Mode = 'test', price = 2500) {
    const { seller, buyer } = accounts[mode];
    const model = await publishModel(t, seller.key, { title: `Policy ${mode} ${price}`, price_cents: price });
    const res = await openCheckout(t, buyer.key, { asset: model.id });
    expect(res.status).toBe(201);
    const stripeSessionId = new URL(res.body.checkout_url).pathname.split('/').pop()!;
    return { model, session: res.body, stripeSession: stripe.session(stripeSessionId), request: stripe.requests[stripe.requests.length - 1] };
  }

  /** Opens a checkout, pays it on "Stripe's page" and delivers checkout.session.completed. */
  async function buy(mode: Mode = 'test', price = 2500) {
    const opened = await openStripeCheckout(mode, price);
    const paid = stripe.completeSession(opened.stripeSession.id);
    expect((await deliverSigned(mode, checkoutCompletedEvent(paid))).status).toBe(200);
    const completed = (await eventsOfType(t, 'PurchaseCompleted')).find((e) => e.data.session_id === opened.session.id);
    return { ...opened, paymentIntent: paid.payment_intent as string, purchaseId: completed!.data.purchase_id as string };
  }

  describe('opening a checkout', () => {
    it('creates a Stripe Checkout Session with the test key and returns its url as checkout_url', async () => {
      const { model, session, stripeSession, request } = await openStripeCheckout('test', 2500);
      expect(session).toMatchObject({ id: expect.stringMatching(/^cs_test_/), status: 'requires_payment', amount_cents: 2500, currency: 'usd' });
      expect(session.checkout_url).toBe(stripeSession.url);
      expect(stripeSession).toMatchObject({ object: 'checkout.session', livemode: false, amount_total: 2500, client_reference_id: session.id });

      expect(request.method).toBe('POST');
      expect(request.path).toBe('/v1/checkout/sessions');
      expect(request.headers.authorization).toBe(`Bearer ${STRIPE.test.secretKey}`);
      expect(request.headers['idempotency-key']).toBe(`checkout-${session.id}`);
      expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
      const ownPage = `http://127.0.0.1:3000/checkout/${session.id}`;
      const metadata = { checkout_session_id: session.id, mode: 'test' };
      expect(request.body).toEqual({
        mode: 'payment',
        line_items: [{ quantity: '1', price_data: { currency: 'usd', unit_amount: '2500', product_data: { name: model.title } } }],
        success_url: ownPage,
        cancel_url: ownPage,
        client_reference_id: session.id,
        metadata,
        payment_intent_data: { metadata },
        // Stripe's session outlives ours by a minute, so Stripe never refuses it as too short.
        expires_at: String(session.expires_at + 60),
      });
    });

    it("passes the buyer's success and cancel URLs to Stripe", async () => {
      const model = await publishModel(t, accounts.test.seller.key, { title: 'Redirecting', price_cents: 900 });
      const res = await openCheckout(t, accounts.test.buyer.key, { asset: model.id, success_url: 'https://buyer.example/thanks', cancel_url: 'https://buyer.example/cart' });
      expect(res.status).toBe(201);
      expect(stripe.requests[stripe.requests.length - 1].body).toMatchObject({ success_url: 'https://buyer.example/thanks', cancel_url: 'https://buyer.example/cart' });
    });

    it('uses the live key for a live-mode purchase', async () => {
      const { session, stripeSession, request } = await openStripeCheckout('live', 4000);
      expect(session.id).toMatch(/^cs_live_/);
      expect(stripeSession).toMatchObject({ id: expect.stringMatching(/^cs_live_/), livemode: true, amount_total: 4000 });
      expect(session.checkout_url).toBe(stripeSession.url);
      expect(request.headers.authorization).toBe(`Bearer ${STRIPE.live.secretKey}`);
      expect(request.body.metadata).toEqual({ checkout_session_id: session.id, mode: 'live' });
    });
  });

  describe('the checkout.session.completed webhook', () => {
    it('entitles the buyer and records one sale, however often and concurrently Stripe delivers it', async () => {
      const { model, session, stripeSession } = await openStripeCheckout('test', 2500);
      const { buyer, seller } = accounts.test;
      expect((await download(buyer.key, model.id)).status).toBe(402);

      const payload = JSON.stringify(checkoutCompletedEvent(stripe.completeSession(stripeSession.id)));
      const first = await deliver('test', payload, sign(payload, STRIPE.test.webhookSecret));
      expect([first.status, first.body]).toEqual([200, { received: true, handled: true }]);

      const purchases = await t.request('GET', '/v1/purchases', { key: buyer.key });
      const purchase = purchases.body.items.find((p: any) => p.checkout_session_id === session.id);
      expect(purchase).toMatchObject({ object: 'purchase', status: 'paid', amount_cents: 2500, currency: 'usd', asset: { id: model.id } });
      expect((await download(buyer.key, model.id)).status).toBe(200);
      const sales = (await t.request('GET', '/v1/balance_transactions', { key: seller.key })).body.items.filter((i: any) => i.source?.purchase_id === purchase.id);
      expect(sales).toEqual([expect.objectContaining({ type: 'sale', amount_cents: 2500, fee_cents: 375, net_cents: 2125 })]);

      const again = await Promise.all(Array.from({ length: 6 }, () => deliver('test', payload, sign(payload, STRIPE.test.webhookSecret))));
      expect(again.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
      expect(await countOf('PurchaseCompleted', 'session_id', session.id)).toBe(1);
      expect(await countOf('SaleRecorded', 'purchase_id', purchase.id)).toBe(1);
      // Stripe's fee on the charge, read from its balance transaction, is booked once, as the platform's cost.
      const fees = (await eventsOfType(t, 'ProcessorFeeCharged')).filter((e) => e.data.session_id === session.id);
      expect(fees.map((e) => e.data)).toEqual([
        {
          session_id: session.id,
          mode: 'test',
          payment_reference: expect.stringMatching(/^pi_/),
          fee_cents: stripeFee(2500),
          currency: 'usd',
          processor_fee_id: expect.stringMatching(/^txn_/),
          charged_at: expect.any(String),
        },
      ]);
      const retrieve = stripe.requests.find((r) => r.method === 'GET' && r.path === `/v1/payment_intents/${fees[0].data.payment_reference}`);
      expect(retrieve?.body).toEqual({ expand: ['latest_charge.balance_transaction'] });
      expect(sales[0].fee_cents).toBe(375); // the creator's fee is the platform's, whatever Stripe charged
    });

    it('refuses a tampered body, a wrong secret, a missing header and a stale signature with 400, recording nothing', async () => {
      const { model, session, stripeSession } = await openStripeCheckout('test', 1500);
      const payload = JSON.stringify(checkoutCompletedEvent(stripe.completeSession(stripeSession.id)));
      const before = await totalEvents();
      const cases: [string, string, string | undefined][] = [
        ['tampered', payload.replace('"amount_total":1500', '"amount_total":1'), sign(payload, STRIPE.test.webhookSecret)],
        ['wrong secret', payload, sign(payload, 'whsec_not_ours')],
        ['live secret', payload, sign(payload, STRIPE.live.webhookSecret)],
        ['missing header', payload, undefined],
        ['stale', payload, sign(payload, STRIPE.test.webhookSecret, Math.floor(Date.now() / 1000) - 301)],
      ];
      for (const [name, body, signature] of cases) {
        const res = await deliver('test', body, signature);
        expect([name, res.status, res.body?.error]).toEqual([name, 400, { code: 'invalid_signature', message: expect.any(String), request_id: expect.any(String) }]);
      }
      expect(await totalEvents()).toBe(before);
      expect((await download(accounts.test.buyer.key, model.id)).status).toBe(402);

      // The same bytes, properly signed, are accepted: the refusals were about the signature alone.
      expect((await deliver('test', payload, sign(payload, STRIPE.test.webhookSecret))).status).toBe(200);
      expect(await countOf('PurchaseCompleted', 'session_id', session.id)).toBe(1);
    });

    it('acknowledges an event type it does not act on with 200 and records nothing', async () => {
      const before = await totalEvents();
      const res = await deliverSigned('test', stripeEvent('customer.created', { id: 'cus_123', object: 'customer', livemode: false }));
      expect([res.status, res.body]).toEqual([200, { received: true, handled: false }]);
      expect(await totalEvents()).toBe(before);
    });

    it('refuses a body over Stripe\'s event size with 413 before reading it, recording nothing, however well signed', async () => {
      const { session, stripeSession } = await openStripeCheckout('test', 1300);
      const event = checkoutCompletedEvent(stripe.completeSession(stripeSession.id)) as any;
      // A real event padded past 256 KiB with metadata: signed with the right secret, it is still refused.
      const padded = { ...event, data: { object: { ...event.data.object, metadata: { ...event.data.object.metadata, pad: 'x'.repeat(STRIPE_EVENT_MAX_BYTES) } } } };
      const before = await totalEvents();
      const res = await deliverSigned('test', padded);
      expect([res.status, res.body.error.code]).toEqual([413, 'payload_too_large']);
      expect(await totalEvents()).toBe(before);

      // Announced larger than the cap, answered before the body is sent: only its first bytes ever arrive.
      await t.app.listen(0, '127.0.0.1');
      const port = (t.app.getHttpServer().address() as AddressInfo).port;
      const head = `POST /webhooks/stripe/test HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nStripe-Signature: t=1,v1=00\r\nContent-Length: ${1024 * 1024}\r\n\r\n{"id":"evt_`;
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => socket.write(head));
        let text = '';
        const giveUp = setTimeout(() => reject(new Error(`no answer while the body was unsent: ${text}`)), 5000);
        socket.on('data', (d) => (text += d.toString('utf8')));
        socket.on('close', () => (clearTimeout(giveUp), resolve(text)));
      });
      expect(answer).toMatch(/^HTTP\/1\.1 413 /);
      expect(answer).toContain('"payload_too_large"');
      expect(answer.toLowerCase()).toContain('connection: close');

      // Within the cap, the same event is taken.
      expect((await deliverSigned('test', event)).status).toBe(200);
      expect(await countOf('PurchaseCompleted', 'session_id', session.id)).toBe(1);
    });

    it("refuses an event of the other mode, even signed with the endpoint's own secret", async () => {
      const test = await openStripeCheckout('test', 1200);
      const live = await openStripeCheckout('live', 1200);
      const before = await totalEvents();
      const crossed: [Mode, object][] = [
        ['live', checkoutCompletedEvent(stripe.completeSession(test.stripeSession.id))],
        ['test', checkoutCompletedEvent(stripe.completeSession(live.stripeSession.id))],
      ];
      for (const [endpoint, event] of crossed) {
        const res = await deliverSigned(endpoint, event);
        expect([res.status, res.body.error?.code]).toEqual([400, 'invalid_request']);
      }
      expect(await totalEvents()).toBe(before);
    });

    it("returns the buyer's open Stripe session, the same Stripe page, instead of opening another", async () => {
      const { model, session, stripeSession } = await openStripeCheckout('test', 1700);
      const sent = stripe.requests.length;
      const again = await Promise.all(Array.from({ length: 3 }, () => openCheckout(t, accounts.test.buyer.key, { asset: model.id })));
      expect(again.map((r) => [r.status, r.body.id, r.body.checkout_url])).toEqual(Array(3).fill([201, session.id, stripeSession.url]));
      // Asked again under the session's own idempotency key: Stripe answers with the session it made.
      expect(stripe.requests.slice(sent).every((r) => r.headers['idempotency-key'] === `checkout-${session.id}`)).toBe(true);
    });

    it('refunds through Stripe a payment that completes for an asset already owned: one purchase, one sale', async () => {
      const { model, session: first, stripeSession: firstStripe } = await openStripeCheckout('test', 2100);
      const { buyer, seller } = accounts.test;
      // A second session exists only once the first has expired (here: on a clock running ahead).
      const res = await withClockAhead(PAST_EXPIRY_MS, () => openCheckout(t, buyer.key, { asset: model.id }));
      expect(res.status).toBe(201);
      expect(res.body.id).not.toBe(first.id);
      const secondStripe = stripe.session(new URL(res.body.checkout_url).pathname.split('/').pop()!);

      // The buyer paid both pages; Stripe delivers both completions at once.
      const payloads = [firstStripe, secondStripe].map((s) => JSON.stringify(checkoutCompletedEvent(stripe.completeSession(s.id))));
      const sentRefunds = stripe.requests.filter((r) => r.path === '/v1/refunds').length;
      const answers = await Promise.all(payloads.map((p) => deliver('test', p, sign(p, STRIPE.test.webhookSecret))));
      expect(answers.map((a) => a.status)).toEqual([200, 200]);

      const sessions = [first.id, res.body.id];
      const completed = (await eventsOfType(t, 'PurchaseCompleted')).filter((e) => sessions.includes(e.data.session_id));
      expect(completed).toHaveLength(1);
      const [duplicate] = (await eventsOfType(t, 'DuplicatePaymentReceived')).filter((e) => sessions.includes(e.data.session_id));
      expect(duplicate.data).toMatchObject({ owned_by_purchase_id: completed[0].data.purchase_id, amount_cents: 2100 });
      const refundRequests = stripe.requests.filter((r) => r.path === '/v1/refunds').slice(sentRefunds);
      expect(refundRequests.map((r) => [r.body, r.headers['idempotency-key']])).toEqual([
        [{ payment_intent: duplicate.data.payment_reference }, `refund-duplicate-${duplicate.data.session_id}`],
      ]);
      const refunded = (await eventsOfType(t, 'DuplicatePaymentRefunded')).filter((e) => sessions.includes(e.data.session_id));
      expect(refunded.map((e) => [e.data.session_id, e.data.settled])).toEqual([[duplicate.data.session_id, true]]);

      // Stripe redelivers both and sends charge.refunded for the duplicate: nothing more is recorded or refunded.
      for (const p of payloads) expect((await deliver('test', p, sign(p, STRIPE.test.webhookSecret))).status).toBe(200);
      expect((await deliverSigned('test', stripe.settleRefund(duplicate.data.payment_reference))).body).toEqual({ received: true, handled: false });
      expect(stripe.requests.filter((r) => r.path === '/v1/refunds').length).toBe(sentRefunds + 1);
      expect((await eventsOfType(t, 'DuplicatePaymentRefunded')).filter((e) => sessions.includes(e.data.session_id))).toHaveLength(1);
      expect((await t.request('GET', '/v1/purchases?limit=100', { key: buyer.key })).body.items.filter((p: any) => p.asset.id === model.id)).toHaveLength(1);
      const sales = (await t.request('GET', '/v1/balance_transactions?limit=100', { key: seller.key })).body.items.filter((i: any) => i.source?.asset?.slug === model.slug);
      expect(sales.map((i: any) => i.type)).toEqual(['sale']);
      expect(await t.app.get(LedgerAudit).verify({})).toMatchObject({ ok: true });
    });

    it('waits for async_payment_succeeded when the session completes unpaid', async () => {
      const { model, session, stripeSession } = await openStripeCheckout('test', 1800);
      const unpaid = stripe.completeSession(stripeSession.id, 'unpaid');
      const res = await deliverSigned('test', checkoutCompletedEvent(unpaid));
      expect([res.status, res.body]).toEqual([200, { received: true, handled: false }]);
      expect(await countOf('PurchaseCompleted', 'session_id', session.id)).toBe(0);
      expect((await download(accounts.test.buyer.key, model.id)).status).toBe(402);

      const succeeded = stripeEvent('checkout.session.async_payment_succeeded', { ...unpaid, payment_status: 'paid' });
      expect((await deliverSigned('test', succeeded)).body).toEqual({ received: true, handled: true });
      const completed = (await eventsOfType(t, 'PurchaseCompleted')).filter((e) => e.data.session_id === session.id);
      expect(completed.map((e) => e.data.payment_reference)).toEqual([unpaid.payment_intent]);
      expect((await download(accounts.test.buyer.key, model.id)).status).toBe(200);
    });

    it("activates a live premium key from Stripe's checkout.session.completed and books the fee as activation revenue, with Stripe's own fee", async () => {
      const account = await t.admin('POST', '/admin/accounts', { name: 'Stripe Premium', email: 'stripe-premium@example.com' });
      const key = await t.admin('POST', '/admin/keys', { account: account.body.id, mode: 'live', tier: 'premium' });
      expect(key.body).toMatchObject({ active: false, activation_checkout_url: expect.stringMatching(/^https:\/\/checkout\.stripe\.com\//) });
      const stripeSession = stripe.session(new URL(key.body.activation_checkout_url).pathname.split('/').pop()!);
      expect(stripeSession).toMatchObject({ amount_total: 2000, livemode: true });
      const paid = stripe.completeSession(stripeSession.id);
      const event = checkoutCompletedEvent(paid);
      expect((await deliverSigned('live', event)).body).toEqual({ received: true, handled: true });
      expect((await deliverSigned('live', event)).status).toBe(200);

      const activations = (await eventsOfType(t, 'KeyActivationPaid')).filter((e) => e.data.key_id === key.body.id);
      expect(activations.map((e) => [e.data.amount_cents, e.data.payment_reference])).toEqual([[2000, paid.payment_intent]]);
      const keys = (await t.admin('GET', `/admin/keys?account=${account.body.id}`)).body.items;
      expect(keys.find((k: any) => k.id === key.body.id)).toMatchObject({ active: true, activation_checkout_url: null });
      // The journal: the payment is activation revenue; Stripe's fee on it is the platform's cost.
      const { rows } = await t.db.query<{ account: string; debit: string; credit: string }>(
        `SELECT account, sum(debit_cents) AS debit, sum(credit_cents) AS credit FROM journal_postings WHERE mode = 'live' AND reference = $1 GROUP BY account ORDER BY account`,
        [activations[0].data.session_id],
      );
      expect(rows.map((r) => [r.account, Number(r.debit), Number(r.credit)])).toEqual([
        ['platform:activation_revenue', 0, 2000],
        ['platform:processor_fees', stripeFee(2000), 0],
        ['processor:clearing', 2000, stripeFee(2000)],
      ]);
    });

    it('fulfils a live purchase from the live endpoint', async () => {
      const { model, purchaseId, paymentIntent } = await buy('live', 3000);
      expect((await download(accounts.live.buyer.key, model.id)).status).toBe(200);
      expect((await eventsOfType(t, 'PurchaseCompleted')).find((e) => e.data.purchase_id === purchaseId)?.data).toMatchObject({ mode: 'live', payment_reference: paymentIntent });
    });
  });

  describe('disputes', () => {
    const seller = () => accounts.test.seller.key;
    const buyerKey = () => accounts.test.buyer.key;
    const linesOf = async (purchaseId: string) =>
      (await t.request('GET', '/v1/balance_transactions?limit=200', { key: seller() })).body.items
        .filter((i: any) => i.source?.purchase_id === purchaseId)
        .map((i: any) => [i.type, i.amount_cents, i.fee_cents, i.net_cents, i.reporting_category]);
    const purchaseOf = async (purchaseId: string) =>
      (await t.request('GET', '/v1/purchases?limit=100', { key: buyerKey() })).body.items.find((p: any) => p.id === purchaseId);
    const postingsByAccount = async (purchaseId: string) => {
      const { rows } = await t.db.query<{ account: string; net: string }>(
        `SELECT account, sum(debit_cents - credit_cents) AS net FROM journal_postings WHERE mode = 'test' AND reference = $1 GROUP BY account ORDER BY account`,
        [purchaseId],
      );
      return Object.fromEntries(rows.map((r) => [r.account.replace(/creator:[^:]+:/, 'creator:'), Number(r.net)]));
    };
    const parked = async () => (await t.admin('GET', '/admin/ledger/parked?mode=test')).body.items as any[];

    it('withholds the seller’s net on charge.dispute.created and releases it when won; redeliveries change nothing', async () => {
      const { model, purchaseId, paymentIntent } = await buy('test', 2599);
      const before = (await t.request('GET', '/v1/balance', { key: seller() })).body;
      const created = stripe.openDispute(paymentIntent);
      expect((await deliverSigned('test', created)).body).toEqual({ received: true, handled: true });
      expect((await deliverSigned('test', created)).status).toBe(200);
      expect(await countOf('PurchaseDisputed', 'purchase_id', purchaseId)).toBe(1);

      // 2,599 at 15%: the net 2,209 is withheld; the dispute fee is the platform's, not the seller's.
      expect(await linesOf(purchaseId)).toEqual([
        ['dispute', -2209, 0, -2209, 'dispute'],
        ['sale', 2599, 390, 2209, 'charge'],
      ]);
      const during = (await t.request('GET', '/v1/balance', { key: seller() })).body;
      expect([during.available_cents - before.available_cents, during.withheld_cents - before.withheld_cents]).toEqual([-2209, 2209]);
      // Open, the purchase stays paid and downloadable, and it cannot be refunded under the dispute.
      expect((await purchaseOf(purchaseId)).status).toBe('paid');
      expect((await download(buyerKey(), model.id)).status).toBe(200);
      const sent = stripe.requests.filter((r) => r.path === '/v1/refunds').length;
      const refused = await t.admin('POST', `/admin/purchases/${purchaseId}/refund`);
      expect([refused.status, refused.body.error.code]).toEqual([400, 'charge_disputed']);
      expect(stripe.requests.filter((r) => r.path === '/v1/refunds').length).toBe(sent);

      const closed = stripe.closeDispute(created.data.object.id, 'won');
      expect((await deliverSigned('test', closed)).body).toEqual({ received: true, handled: true });
      expect((await deliverSigned('test', closed)).status).toBe(200);
      expect(await countOf('PurchaseDisputeClosed', 'purchase_id', purchaseId)).toBe(1);
      expect(await linesOf(purchaseId)).toEqual([
        ['dispute_reversal', 2209, 0, 2209, 'dispute_reversal'],
        ['dispute', -2209, 0, -2209, 'dispute'],
        ['sale', 2599, 390, 2209, 'charge'],
      ]);
      const after = (await t.request('GET', '/v1/balance', { key: seller() })).body;
      expect([after.available_cents - before.available_cents, after.withheld_cents - before.withheld_cents]).toEqual([0, 0]);
      expect((await purchaseOf(purchaseId)).status).toBe('paid');
      // Won: Stripe returned the amount and kept its fee; nothing is left withheld or in disputes.
      expect(await postingsByAccount(purchaseId)).toEqual({
        'creator:payable': -2209,
        'creator:withheld': 0,
        'platform:disputes': 0,
        'platform:fee_revenue': -390,
        'platform:processor_fees': 1500,
        'processor:clearing': 1099,
      });
      const verify = await t.admin('GET', '/admin/ledger/verify?mode=test');
      expect(verify.body.ok).toBe(true);
      const reconciled = (await t.admin('GET', '/admin/ledger/reconcile?mode=test')).body;
      const ofDispute = (items: any[]) => items.filter((i) => i.processor_id === created.data.object.id);
      expect([ofDispute(reconciled.missing_in_ledger), ofDispute(reconciled.missing_at_processor), ofDispute(reconciled.amount_mismatches)]).toEqual([[], [], []]);
    });

    it('lost: the purchase becomes disputed, its download is revoked and the platform loses its fee on the sale', async () => {
      const { model, purchaseId, paymentIntent } = await buy('test', 2599);
      const created = stripe.openDispute(paymentIntent);
      expect((await deliverSigned('test', created)).status).toBe(200);
      // An inquiry closed without a chargeback moves nothing.
      expect((await deliverSigned('test', stripe.closeDispute(created.data.object.id, 'warning_closed'))).body).toEqual({ received: true, handled: false });
      expect((await deliverSigned('test', stripe.closeDispute(created.data.object.id, 'lost'))).body).toEqual({ received: true, handled: true });

      expect((await purchaseOf(purchaseId)).status).toBe('disputed');
      expect((await download(buyerKey(), model.id)).status).toBe(402);
      expect(await linesOf(purchaseId)).toEqual([
        ['dispute', -2209, 0, -2209, 'dispute'],
        ['sale', 2599, 390, 2209, 'charge'],
      ]);
      expect(await postingsByAccount(purchaseId)).toEqual({
        'creator:payable': 0,
        'creator:withheld': 0,
        'platform:disputes': 0,
        'platform:fee_revenue': 0,
        'platform:processor_fees': 1500,
        'processor:clearing': -1500,
      });
      // A won closing reported after the loss is refused by the books and parked, not applied.
      expect((await deliverSigned('test', stripe.closeDispute(created.data.object.id, 'won'))).body).toEqual({ received: true, handled: false });
      expect((await purchaseOf(purchaseId)).status).toBe('disputed');
      expect((await parked()).some((p) => p.object_id === created.data.object.id && /closed as lost/.test(p.reason))).toBe(true);
      expect((await t.admin('GET', '/admin/ledger/verify?mode=test')).body.ok).toBe(true);
    });

    it('parks a dispute or a partial refund of a payment that is none of ours, and a dispute of a refunded purchase, once each', async () => {
      const foreignDispute = stripeEvent('charge.dispute.created', {
        id: 'dp_foreign',
        object: 'dispute',
        amount: 1000,
        balance_transactions: [],
        charge: 'ch_foreign',
        currency: 'usd',
        livemode: false,
        payment_intent: 'pi_foreign',
        reason: 'fraudulent',
        status: 'needs_response',
      });
      const foreignRefund = stripeEvent('charge.refunded', {
        id: 'ch_foreign2',
        object: 'charge',
        amount: 3000,
        amount_refunded: 500,
        currency: 'usd',
        livemode: false,
        payment_intent: 'pi_foreign2',
        refunded: false,
        refunds: { object: 'list', data: [{ id: 're_foreign2', object: 'refund', amount: 500 }], has_more: false },
      });
      const { purchaseId, paymentIntent } = await buy('test', 1700);
      expect((await t.admin('POST', `/admin/purchases/${purchaseId}/refund`)).body.status).toBe('refunded');
      const refundedDispute = stripe.openDispute(paymentIntent);

      const partsBefore = (await eventsOfType(t, 'PurchasePartiallyRefunded')).length;
      for (const event of [foreignDispute, foreignRefund, refundedDispute, foreignDispute, foreignRefund, refundedDispute]) {
        expect((await deliverSigned('test', event)).body).toEqual({ received: true, handled: false });
      }
      // Three parked facts, however often Stripe delivers them; nothing else recorded.
      const ours = [foreignDispute.id, foreignRefund.id, refundedDispute.id];
      expect((await eventsOfType(t, 'ProcessorEventParked')).filter((e) => ours.includes(e.data.processor_event_id))).toHaveLength(3);
      expect(await countOf('PurchaseDisputed', 'purchase_id', purchaseId)).toBe(0);
      expect((await eventsOfType(t, 'PurchasePartiallyRefunded')).length).toBe(partsBefore);
      const items = (await parked()).filter((p) => ours.includes(p.processor_event_id));
      expect(items.map((p) => [p.processor_event_type, p.object_id, p.payment_reference, p.amount_cents])).toEqual([
        ['charge.dispute.created', 'dp_foreign', 'pi_foreign', 1000],
        ['charge.refunded', 'ch_foreign2', 'pi_foreign2', 500],
        ['charge.dispute.created', refundedDispute.data.object.id, paymentIntent, 1700],
      ]);
      expect(items[0].reason).toBe('payment pi_foreign is none of our purchases');
      expect(items[2].reason).toMatch(/cannot be disputed: its payment was refunded/);
    });
  });

  describe('refunds', () => {
    const refund = (purchaseId: string, body?: { amount_cents: number }) => t.admin('POST', `/admin/purchases/${purchaseId}/refund`, body);
    const refundRequests = () => stripe.requests.filter((r) => r.path === '/v1/refunds');

    it('records partial refunds from Stripe: the purchase stays paid, the seller gives back each part with the fee in proportion, once', async () => {
      const { model, purchaseId, paymentIntent } = await buy('test', 2599);
      const seller = accounts.test.seller.key;
      const linesOf = async () =>
        (await t.request('GET', '/v1/balance_transactions?limit=200', { key: seller })).body.items
          .filter((i: any) => i.source?.purchase_id === purchaseId)
          .map((i: any) => [i.type, i.amount_cents, i.fee_cents, i.net_cents, i.description]);

      const first = stripe.refundPart(paymentIntent, 1000);
      expect((await deliverSigned('test', first)).body).toEqual({ received: true, handled: true });
      // Delivered again: nothing more.
      expect((await deliverSigned('test', first)).status).toBe(200);
      // 1,000 of 2,599 at 15% (fee 390): 150 of the fee back, rounded half up.
      expect(await linesOf()).toEqual([
        ['refund', -1000, -150, -850, `Partial refund of "${model.title}"`],
        ['sale', 2599, 390, 2209, `Sale of "${model.title}"`],
      ]);
      expect((await download(accounts.test.buyer.key, model.id)).status).toBe(200);
      const purchase = (await t.request('GET', '/v1/purchases?limit=100', { key: accounts.test.buyer.key })).body.items.find((p: any) => p.id === purchaseId);
      expect(purchase.status).toBe('paid');

      // The rest, through svc purchases refund: Stripe refunds what is left, and so does the ledger.
      const rest = await t.admin('POST', `/admin/purchases/${purchaseId}/refund`);
      expect([rest.status, rest.body.status]).toEqual([200, 'refunded']);
      expect(await linesOf()).toEqual([
        ['refund', -1599, -240, -1359, `Partial refund of "${model.title}"`],
        ['refund', -1000, -150, -850, `Partial refund of "${model.title}"`],
        ['sale', 2599, 390, 2209, `Sale of "${model.title}"`],
      ]);
      expect((await download(accounts.test.buyer.key, model.id)).status).toBe(402);
      expect((await t.app.get(LedgerAudit).verify({})).ok).toBe(true);
    });

    it('refunds part of a purchase through Stripe with amount_cents, once, however often Stripe reports it', async () => {
      const { purchaseId, paymentIntent } = await buy('test', 2599);
      const sent = refundRequests().length;
      const bad = await refund(purchaseId, { amount_cents: 2600 });
      expect([bad.status, bad.body.error.code]).toEqual([400, 'validation_failed']);
      expect(refundRequests().length).toBe(sent);

      const part = await refund(purchaseId, { amount_cents: 1000 });
      expect([part.status, part.body.status]).toEqual([200, 'paid']);
      expect(refundRequests().slice(sent).map((r) => r.body)).toEqual([{ payment_intent: paymentIntent, amount: '1000' }]);
      // Stripe's charge.refunded for the refund we made, delivered twice: nothing more.
      const reported = stripe.chargeRefunded(paymentIntent);
      expect((await deliverSigned('test', reported)).status).toBe(200);
      expect((await deliverSigned('test', reported)).status).toBe(200);
      const refunds = (await eventsOfType(t, 'RefundRecorded')).filter((e) => e.data.purchase_id === purchaseId);
      expect(refunds.map((e) => [e.data.amount_cents, e.data.fee_cents, e.data.processor_refund_id])).toEqual([[-1000, -150, reported.data.object.refunds.data[0].id]]);
    });

    it('refunds through Stripe; a succeeded refund ends the entitlement and debits the seller at once', async () => {
      const { model, purchaseId, paymentIntent } = await buy('test', 2500);
      const sent = refundRequests().length;
      const res = await refund(purchaseId);
      expect([res.status, res.body.status, res.body.id]).toEqual([200, 'refunded', purchaseId]);

      const [request] = refundRequests().slice(sent);
      expect(request.body).toEqual({ payment_intent: paymentIntent });
      expect(request.headers['idempotency-key']).toBe(`refund-${purchaseId}`);
      expect(request.headers.authorization).toBe(`Bearer ${STRIPE.test.secretKey}`);

      expect((await download(accounts.test.buyer.key, model.id)).status).toBe(402);
      const lines = (await t.request('GET', '/v1/balance_transactions', { key: accounts.test.seller.key })).body.items.filter((i: any) => i.source?.purchase_id === purchaseId);
      expect(lines.map((l: any) => [l.type, l.amount_cents, l.fee_cents, l.net_cents]).sort()).toEqual([
        ['refund', -2500, -375, -2125],
        ['sale', 2500, 375, 2125],
      ]);

      // Stripe still sends charge.refunded for it; that records nothing more.
      expect((await deliverSigned('test', stripe.settleRefund(paymentIntent))).status).toBe(200);
      expect(await countOf('PurchaseRefunded', 'purchase_id', purchaseId)).toBe(1);
      expect(await countOf('RefundRecorded', 'purchase_id', purchaseId)).toBe(1);

      const again = await refund(purchaseId);
      expect([again.status, again.body.error.code]).toEqual([400, 'already_refunded']);
      expect(refundRequests().length).toBe(sent + 1);
    });

    it('keeps a pending refund paid until charge.refunded arrives, then refunds once', async () => {
      stripe.refundStatus = 'pending';
      const { model, purchaseId, paymentIntent } = await buy('test', 2000);
      const sent = refundRequests().length;
      const res = await refund(purchaseId);
      expect([res.status, res.body.status]).toEqual([200, 'paid']);
      // A retry reuses the idempotency key, so Stripe answers with the same refund instead of refusing a second one.
      const retry = await refund(purchaseId);
      expect([retry.status, retry.body.status]).toEqual([200, 'paid']);
      expect(refundRequests().slice(sent).map((r) => r.headers['idempotency-key'])).toEqual([`refund-${purchaseId}`, `refund-${purchaseId}`]);
      expect((await download(accounts.test.buyer.key, model.id)).status).toBe(200);
      expect(await countOf('PurchaseRefunded', 'purchase_id', purchaseId)).toBe(0);

      const charge = stripe.settleRefund(paymentIntent);
      const webhook = await deliverSigned('test', charge);
      expect([webhook.status, webhook.body]).toEqual([200, { received: true, handled: true }]);
      const purchases = (await t.request('GET', '/v1/purchases', { key: accounts.test.buyer.key })).body.items;
      expect(purchases.find((p: any) => p.id === purchaseId).status).toBe('refunded');
      expect((await download(accounts.test.buyer.key, model.id)).status).toBe(402);
      const refunded = (await eventsOfType(t, 'PurchaseRefunded')).filter((e) => e.data.purchase_id === purchaseId);
      expect(refunded.map((e) => e.data.processor_refund_id)).toEqual([(charge.data.object as any).refunds.data[0].id]);

      expect((await deliverSigned('test', charge)).status).toBe(200);
      expect(await countOf('PurchaseRefunded', 'purchase_id', purchaseId)).toBe(1);
      expect(await countOf('RefundRecorded', 'purchase_id', purchaseId)).toBe(1);
    });

    it('answers 503 to a charge.refunded for a purchase its read model has not seen yet, so Stripe delivers it again', async () => {
      stripe.refundStatus = 'pending';
      const stalled = await stallProjections(t);
      let resumed = false;
      try {
        const { purchaseId, paymentIntent } = await buy('test', 1300);
        // Refunded from Stripe's dashboard: only Stripe's webhook tells the service.
        const dashboard = await fetch(`${stripe.url}/v1/refunds`, {
          method: 'POST',
          headers: { authorization: `Bearer ${STRIPE.test.secretKey}`, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ payment_intent: paymentIntent }),
        });
        expect(dashboard.status).toBe(200);
        const charge = stripe.settleRefund(paymentIntent);
        const early = await deliverSigned('test', charge);
        expect([early.status, early.body.error.code]).toEqual([503, 'service_unavailable']);
        expect(await countOf('PurchaseRefunded', 'purchase_id', purchaseId)).toBe(0);

        await stalled.resume();
        resumed = true;
        const again = await deliverSigned('test', charge);
        expect([again.status, again.body]).toEqual([200, { received: true, handled: true }]);
        expect(await countOf('PurchaseRefunded', 'purchase_id', purchaseId)).toBe(1);
      } finally {
        if (!resumed) await stalled.resume();
      }
    });

    it('reports a refund Stripe fails as 402 refund_failed and keeps the purchase paid', async () => {
      stripe.refundStatus = 'failed';
      const { model, purchaseId } = await buy('test', 1100);
      const res = await refund(purchaseId);
      expect([res.status, res.body.error.code]).toEqual([402, 'refund_failed']);
      expect((await download(accounts.test.buyer.key, model.id)).status).toBe(200);
      expect(await countOf('PurchaseRefunded', 'purchase_id', purchaseId)).toBe(0);
    });

    it('answers 404 for an unknown purchase without calling Stripe', async () => {
      const sent = refundRequests().length;
      const res = await refund('pur_doesnotexist');
      expect([res.status, res.body.error.code]).toEqual([404, 'not_found']);
      expect(refundRequests().length).toBe(sent);
    });

    it('records nothing when Stripe does not know the payment', async () => {
      const { session, stripeSession } = await openStripeCheckout('test', 1300);
      // Fulfilled from an event naming a PaymentIntent this Stripe account never made.
      const event = checkoutCompletedEvent({ ...stripe.completeSession(stripeSession.id), payment_intent: 'pi_unknown' });
      expect((await deliverSigned('test', event)).status).toBe(200);
      const purchaseId = (await eventsOfType(t, 'PurchaseCompleted')).find((e) => e.data.session_id === session.id)!.data.purchase_id;
      const sent = refundRequests().length;
      const res = await refund(purchaseId);
      expect(refundRequests().slice(sent).map((r) => r.body)).toEqual([{ payment_intent: 'pi_unknown' }]);
      // Stripe's message stays in our log; the caller learns the processor failed.
      expect([res.status, res.body.error.code]).toEqual([502, 'payment_processor_error']);
      expect(res.body.error.message).not.toContain('pi_unknown');
      expect(await countOf('PurchaseRefunded', 'purchase_id', purchaseId)).toBe(0);
      const purchases = (await t.request('GET', '/v1/purchases', { key: accounts.test.buyer.key })).body.items;
      expect(purchases.find((p: any) => p.id === purchaseId).status).toBe('paid');
    });
  });

  describe('faults on Stripe\'s side', () => {
    it('acknowledges a completed session that is not in this service\'s store, so Stripe stops retrying', async () => {
      const { stripeSession } = await openStripeCheckout('test', 1100);
      const before = await totalEvents();
      const foreign = { ...stripe.completeSession(stripeSession.id) };
      foreign.metadata = { checkout_session_id: 'cs_test_AAAAAAAAAAAAAAAAAAAAAAAA', mode: 'test' };
      const res = await deliverSigned('test', checkoutCompletedEvent(foreign));
      expect([res.status, res.body]).toEqual([200, { received: true, handled: false }]);
      expect(await totalEvents()).toBe(before);
    });

    it('answers 502 payment_processor_error without leaking Stripe\'s message when Stripe refuses our key', async () => {
      const broken = await startTestApp({
        shared: t.database,
        env: { PAYMENTS: 'stripe', STRIPE_SECRET_KEY_TEST: 'sk_test_revoked', STRIPE_WEBHOOK_SECRET_TEST: STRIPE.test.webhookSecret, STRIPE_API_BASE: stripe.url },
      });
      try {
        const model = await publishModel(t, accounts.test.seller.key, { title: 'Unsellable', price_cents: 1000 });
        const res = await openCheckout(broken, accounts.test.buyer.key, { asset: model.id });
        expect([res.status, res.body.error.code]).toEqual([502, 'payment_processor_error']);
        expect(res.text).not.toContain('sk_test');
      } finally {
        await broken.close();
      }
    });
  });

  describe('payouts as Stripe transfers', () => {
    const run = (body: Record<string, unknown>) => t.admin('POST', '/admin/payouts/run', body);
    const transferRequests = () => stripe.requests.filter((r) => r.path === '/v1/transfers');

    async function creatorWithSale(mode: Mode) {
      const seller = await t.accountWithKey({ mode, name: `Creator ${mode} ${Math.random()}` });
      const buyer = await t.accountWithKey({ mode, scopes: ['models:read'] });
      const model = await publishModel(t, seller.key, { title: `Payout source ${Math.random()}`, price_cents: 2000 });
      const res = await openCheckout(t, buyer.key, { asset: model.id });
      const stripeSession = stripe.session(new URL(res.body.checkout_url).pathname.split('/').pop()!);
      expect((await deliverSigned(mode, checkoutCompletedEvent(stripe.completeSession(stripeSession.id)))).status).toBe(200);
      return seller;
    }
    const ledgerOf = async (key: string) => (await t.request('GET', '/v1/balance_transactions', { key })).body;

    it('needs a destination, then transfers the balance to it once and records the payout', async () => {
      const seller = await creatorWithSale('live');
      const missing = await run({ mode: 'live', account: seller.accountId });
      expect([missing.status, missing.body.error.code]).toEqual([400, 'payout_destination_missing']);

      stripe.connectedAccounts.add('acct_1CreatorLive');
      const set = await t.admin('POST', '/admin/payouts/destination', { account: seller.accountId, mode: 'live', stripe_account: 'acct_1CreatorLive' });
      expect(set.body).toEqual({ account: seller.accountId, mode: 'live', stripe_account: 'acct_1CreatorLive' });
      const bad = await t.admin('POST', '/admin/payouts/destination', { account: seller.accountId, mode: 'live', stripe_account: 'nope' });
      expect([bad.status, bad.body.error.code]).toEqual([400, 'validation_failed']);

      const paid = await run({ mode: 'live', account: seller.accountId });
      expect(paid.status).toBe(200);
      expect(paid.body.items).toEqual([expect.objectContaining({ object: 'payout', amount_cents: 1700, status: 'paid' })]);
      const [request] = transferRequests().slice(-1);
      expect(request.headers.authorization).toBe(`Bearer ${STRIPE.live.secretKey}`);
      expect(request.headers['idempotency-key']).toBe(`payout-${paid.body.items[0].id}`);
      expect(request.body).toEqual({ amount: '1700', currency: 'usd', destination: 'acct_1CreatorLive', metadata: { payout_id: paid.body.items[0].id, mode: 'live' } });
      expect((await ledgerOf(seller.key)).summary).toMatchObject({ paid_out_cents: 1700, balance_cents: 0 });
      const again = await run({ mode: 'live', account: seller.accountId });
      expect([again.status, again.body.error.code]).toEqual([400, 'nothing_to_pay']);
    });

    it("reconciles the journal with Stripe's balance transactions, naming what is missing or altered on either side", async () => {
      // A period of this test's own: Stripe's clock counts whole seconds.
      await new Promise((r) => setTimeout(r, 1100));
      const from = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString();
      const seller = await creatorWithSale('live');
      stripe.connectedAccounts.add('acct_1Reconciled');
      await t.admin('POST', '/admin/payouts/destination', { account: seller.accountId, mode: 'live', stripe_account: 'acct_1Reconciled' });
      expect((await run({ mode: 'live', account: seller.accountId })).status).toBe(200);
      const reconcile = async () => (await t.admin('GET', `/admin/ledger/reconcile?mode=live&from=${encodeURIComponent(from)}`)).body;

      // The charge (by its PaymentIntent), the fee Stripe kept on it (by its balance transaction) and the transfer.
      const clean = await reconcile();
      expect(clean).toMatchObject({ ok: true, matched: 3, missing_in_ledger: [], missing_at_processor: [], amount_mismatches: [] });
      const listed = stripe.requests.filter((r) => r.method === 'GET' && r.path === '/v1/balance_transactions');
      expect(listed.at(-1)!.headers.authorization).toBe(`Bearer ${STRIPE.live.secretKey}`);
      expect(listed.at(-1)!.body).toMatchObject({ expand: ['data.source'], created: { gte: String(Date.parse(from) / 1000) } });

      const ours = stripe.balanceTransactions.filter((bt) => bt.livemode && bt.created >= Date.parse(from) / 1000);
      const charge = ours.find((bt) => bt.type === 'charge')!;
      const transfer = ours.find((bt) => bt.type === 'transfer')!;
      charge.fee += 7;
      stripe.balanceTransactions.splice(stripe.balanceTransactions.indexOf(transfer), 1);
      const tampered = await reconcile();
      expect(tampered).toMatchObject({ ok: false, matched: 1, missing_in_ledger: [] });
      expect(tampered.amount_mismatches).toEqual([expect.objectContaining({ kind: 'fee', processor_id: charge.id, processor_cents: stripeFee(2000) + 7, ledger_cents: stripeFee(2000) })]);
      expect(tampered.missing_at_processor).toEqual([expect.objectContaining({ kind: 'transfer', processor_id: transfer.source, ledger_cents: 1700, processor_cents: null })]);
    });

    it('keeps the balance when Stripe refuses the transfer, and pays it on a later run', async () => {
      const seller = await creatorWithSale('test');
      await t.admin('POST', '/admin/payouts/destination', { account: seller.accountId, mode: 'test', stripe_account: 'acct_1NotConnectedYet' });
      const refused = await run({ mode: 'test', account: seller.accountId });
      expect([refused.status, refused.body.error.code]).toEqual([400, 'transfer_failed']);
      expect((await ledgerOf(seller.key)).summary).toMatchObject({ paid_out_cents: 0, balance_cents: 1700 });
      expect(await countOf('PayoutFailed', 'account_id', seller.accountId)).toBe(1);
      // The failed payout is shown with Stripe's code, and its amount is available again.
      const failed = (await t.request('GET', '/v1/payouts', { key: seller.key })).body.items;
      expect(failed).toEqual([
        {
          id: expect.stringMatching(/^po_/),
          object: 'payout',
          amount_cents: 1700,
          currency: 'usd',
          status: 'failed',
          created_at: expect.any(String),
          arrival_date: null,
          failure_code: 'resource_missing',
          failure_message: expect.stringContaining('resource_missing'),
        },
      ]);
      expect((await t.request('GET', '/v1/balance', { key: seller.key })).body).toMatchObject({ available_cents: 1700, in_transit_cents: 0 });

      // The refusal paused the creator's payouts: fixing the account at Stripe is not enough, no
      // transfer is tried there again until a destination is set (issue 38, defect 1).
      expect((await t.request('GET', '/v1/payouts', { key: seller.key })).body.payouts_pause).toMatchObject({ reason: 'destination_refused: resource_missing', failure_code: 'resource_missing' });
      stripe.connectedAccounts.add('acct_1NotConnectedYet');
      const sent = transferRequests().length;
      const paused = await run({ mode: 'test', account: seller.accountId });
      expect([paused.status, paused.body.error.code]).toEqual([400, 'payouts_paused']);
      expect(transferRequests().length).toBe(sent);
      expect(await countOf('PayoutFailed', 'account_id', seller.accountId)).toBe(1);
      // Set again once connected: the pause is lifted and the next run pays.
      expect((await t.admin('POST', '/admin/payouts/destination', { account: seller.accountId, mode: 'test', stripe_account: 'acct_1NotConnectedYet' })).status).toBe(200);
      expect((await t.request('GET', '/v1/payouts', { key: seller.key })).body).toMatchObject({ payouts_paused: false, payouts_pause: null });
      const paid = await run({ mode: 'test', account: seller.accountId });
      expect(paid.body.items.map((p: any) => p.amount_cents)).toEqual([1700]);
      const payouts = (await t.request('GET', '/v1/payouts', { key: seller.key })).body.items;
      expect(payouts.map((p: any) => [p.status, p.failure_code])).toEqual([['paid', null], ['failed', 'resource_missing']]);
      expect((await t.request('GET', '/v1/balance', { key: seller.key })).body).toMatchObject({ available_cents: 0, in_transit_cents: 0 });
    });

    // Issue 38, defect 1: a mode-wide run stopped at the first creator whose destination Stripe
    // refused, so the creators after it were never paid.
    it('pays every creator it can in a mode-wide run, reporting a refused destination per account', async () => {
      const refusedSeller = await creatorWithSale('live');
      const paidSeller = await creatorWithSale('live');
      await t.admin('POST', '/admin/payouts/destination', { account: refusedSeller.accountId, mode: 'live', stripe_account: 'acct_1RefusedLive' });
      stripe.connectedAccounts.add('acct_1PaidLive');
      await t.admin('POST', '/admin/payouts/destination', { account: paidSeller.accountId, mode: 'live', stripe_account: 'acct_1PaidLive' });
      const res = await run({ mode: 'live' });
      expect(res.status).toBe(200);
      const resultOf = (accountId: string) => res.body.results.find((r: any) => r.account_id === accountId);
      expect(resultOf(paidSeller.accountId)).toMatchObject({ status: 'paid', amount_cents: 1700, payout_id: expect.stringMatching(/^po_/) });
      expect(resultOf(refusedSeller.accountId)).toMatchObject({ status: 'failed', failure_code: 'resource_missing', reason: expect.stringContaining('resource_missing') });
      expect(res.body.items.map((p: any) => p.id)).toContain(resultOf(paidSeller.accountId).payout_id);
      expect((await ledgerOf(paidSeller.key)).summary).toMatchObject({ paid_out_cents: 1700, balance_cents: 0 });
      expect((await ledgerOf(refusedSeller.key)).summary).toMatchObject({ paid_out_cents: 0, balance_cents: 1700 });
      expect(transferRequests().filter((r) => r.body.destination === 'acct_1PaidLive')).toHaveLength(1);

      // The refused creator is paused: a second run skips it, sends Stripe nothing for it and records no other failed payout.
      expect((await t.request('GET', '/v1/payouts', { key: refusedSeller.key })).body).toMatchObject({ payouts_paused: true, payouts_pause: { reason: 'destination_refused: resource_missing' } });
      const refusedTransfers = () => transferRequests().filter((r) => r.body.destination === 'acct_1RefusedLive').length;
      const triedBefore = refusedTransfers();
      const again = await run({ mode: 'live' });
      expect(again.body.results.find((r: any) => r.account_id === refusedSeller.accountId)).toMatchObject({ status: 'skipped', failure_code: 'payouts_paused' });
      expect(refusedTransfers()).toBe(triedBefore);
      expect(await countOf('PayoutFailed', 'account_id', refusedSeller.accountId)).toBe(1);
      // A new destination (connected at Stripe) lifts the pause, and the next run pays it.
      stripe.connectedAccounts.add('acct_1FixedLive');
      await t.admin('POST', '/admin/payouts/destination', { account: refusedSeller.accountId, mode: 'live', stripe_account: 'acct_1FixedLive' });
      const fixed = await run({ mode: 'live' });
      expect(fixed.body.results.find((r: any) => r.account_id === refusedSeller.accountId)).toMatchObject({ status: 'paid', amount_cents: 1700 });
      expect((await ledgerOf(refusedSeller.key)).summary).toMatchObject({ paid_out_cents: 1700, balance_cents: 0 });
      expect(await countOf('PayoutFailed', 'account_id', refusedSeller.accountId)).toBe(1);
    });

    it('leaves a payout in flight when Stripe fails, and the next run sends the same transfer, paid once', async () => {
      const seller = await creatorWithSale('test');
      stripe.connectedAccounts.add('acct_1Flaky');
      await t.admin('POST', '/admin/payouts/destination', { account: seller.accountId, mode: 'test', stripe_account: 'acct_1Flaky' });
      const sent = transferRequests().length;
      stripe.transferOutages = 10; // more than the SDK's own retries
      const failed = await run({ mode: 'test', account: seller.accountId });
      expect([failed.status, failed.body.error.code]).toEqual([502, 'payment_processor_error']);
      // Outcome unknown: nothing is paid out, and no second payout can start meanwhile.
      expect((await ledgerOf(seller.key)).summary).toMatchObject({ paid_out_cents: 0, balance_cents: 1700 });
      // The payout is shown in transit, and so is its amount in the balance.
      const inTransit = (await t.request('GET', '/v1/payouts', { key: seller.key })).body.items;
      expect(inTransit.map((p: any) => [p.amount_cents, p.status, p.arrival_date])).toEqual([[1700, 'in_transit', null]]);
      expect((await t.request('GET', '/v1/balance', { key: seller.key })).body).toMatchObject({ available_cents: 0, in_transit_cents: 1700 });
      const keys = new Set(transferRequests().slice(sent).map((r) => r.headers['idempotency-key']));
      expect(keys.size).toBe(1);

      stripe.transferOutages = 0;
      const [first, second] = await Promise.all([run({ mode: 'test', account: seller.accountId }), run({ mode: 'test' })]);
      const payouts = [...first.body.items ?? [], ...second.body.items ?? []];
      expect(payouts.map((p: any) => p.amount_cents)).toEqual([1700]);
      expect(transferRequests().slice(sent).every((r) => keys.has(r.headers['idempotency-key']))).toBe(true);
      expect([...stripe.transfers.values()].filter((tr) => tr.destination === 'acct_1Flaky')).toHaveLength(1);
      expect((await ledgerOf(seller.key)).summary).toMatchObject({ paid_out_cents: 1700, balance_cents: 0 });
      expect((await t.request('GET', '/v1/payouts', { key: seller.key })).body.items.map((p: any) => [p.id, p.status])).toEqual([[inTransit[0].id, 'paid']]);
      expect((await t.request('GET', '/v1/balance', { key: seller.key })).body).toMatchObject({ available_cents: 0, in_transit_cents: 0 });
    });
  });
});
