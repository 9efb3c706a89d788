import { LedgerAudit } from '../../src/ledger/ledger-audit';
import { publishModel } from '../catalog/catalog-client';
import { startTestApp, TestApp } from '../support/app';
import { buy, DECLINES, eventsOfType, openCheckout, PAST_EXPIRY_MS, pathOf, PAYS, payOnPage, withClockAhead } from './commerce-client';

describe('purchases through the sandbox hosted checkout', () => {
  let t: TestApp;
  let seller: { accountId: string; key: string };
  let buyer: { accountId: string; key: string };

  beforeAll(async () => {
    t = await startTestApp();
    seller = await t.accountWithKey({ name: 'Seller Co' });
    buyer = await t.accountWithKey({ name: 'Buyer Inc', scopes: ['models:read'] });
  });
  afterAll(() => t.close());

  it('opens a checkout session, pays it on the hosted page, entitles the buyer and records one sale for the seller', async () => {
    const model = await publishModel(t, seller.key, { title: 'Paid Grasp', price_cents: 2500 }, 'paid-weights');
    expect((await t.request('POST', `/v1/models/${model.id}/download`, { key: buyer.key })).status).toBe(402);

    const res = await openCheckout(t, buyer.key, { asset: model.slug });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^cs_test_/),
      object: 'checkout_session',
      purpose: 'purchase',
      status: 'requires_payment',
      checkout_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:3000\/checkout\/cs_test_/),
      expires_at: expect.any(Number),
      amount_cents: 2500,
      currency: 'usd',
      asset: { id: model.id, slug: model.slug, title: 'Paid Grasp' },
      success_url: null,
      cancel_url: null,
      created_at: expect.any(String),
    });
    const ttl = res.body.expires_at - Math.floor(Date.parse(res.body.created_at) / 1000);
    expect(ttl).toBeGreaterThanOrEqual(1799);
    expect(ttl).toBeLessThanOrEqual(1800);

    const page = await t.request('GET', pathOf(res.body.checkout_url));
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toMatch(/<form method="post"[^>]*>/);
    expect(page.text).toContain('name="card_number"');
    expect(page.text).toContain('Paid Grasp');

    const paid = await payOnPage(t, res.body.checkout_url, PAYS);
    expect(paid.status).toBe(200);
    expect(paid.text).toContain('Payment complete');

    const list = await t.request('GET', '/v1/purchases', { key: buyer.key });
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      items: [
        {
          id: expect.stringMatching(/^pur_/),
          object: 'purchase',
          asset: { id: model.id, slug: model.slug, title: 'Paid Grasp' },
          amount_cents: 2500,
          currency: 'usd',
          status: 'paid',
          checkout_session_id: res.body.id,
          created_at: expect.any(String),
          amount_refunded_cents: 0,
        },
      ],
      next_cursor: null,
      has_more: false,
    });
    const download = await t.request('POST', `/v1/models/${model.id}/download`, { key: buyer.key });
    expect(download.status).toBe(200);

    const balance = await t.request('GET', '/v1/balance_transactions', { key: seller.key });
    expect(balance.body.items).toEqual([
      expect.objectContaining({ type: 'sale', amount_cents: 2500, fee_cents: 375, net_cents: 2125, status: 'pending', source: { purchase_id: list.body.items[0].id, asset: { slug: model.slug, title: 'Paid Grasp' } } }),
    ]);
    expect(balance.body.summary).toMatchObject({ gross_cents: 2500, balance_cents: 2125, sale_count: 1 });

    // The page now says it is paid; paying again records nothing more.
    expect((await t.request('GET', pathOf(res.body.checkout_url))).text).toContain('Payment complete');
    expect((await payOnPage(t, res.body.checkout_url, PAYS)).status).toBe(200);
    expect((await eventsOfType(t, 'PurchaseCompleted')).filter((e) => e.data.session_id === res.body.id)).toHaveLength(1);
    expect((await eventsOfType(t, 'SaleRecorded')).filter((e) => e.data.purchase_id === list.body.items[0].id)).toHaveLength(1);
  });

  it("refuses Stripe's webhook route with 404 before reading its body when the processor is the sandbox", async () => {
    for (const payload of ['x'.repeat(900_000), '{"not": json', '']) {
      const res = await t.request('POST', '/webhooks/stripe/test', { payload, headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' } });
      // Not 400 (a body that does not parse) nor 413: refused before the body was read.
      expect([res.status, res.body.error.code]).toEqual([404, 'not_found']);
      expect(res.body.error.request_id).toMatch(/^req_/);
    }
  });

  it('redirects to success_url with 303 after paying', async () => {
    const model = await publishModel(t, seller.key, { title: 'Redirecting', price_cents: 500 });
    const res = await openCheckout(t, buyer.key, { asset: model.id, success_url: 'https://buyer.example/thanks?x=1', cancel_url: 'https://buyer.example/cart' });
    expect(res.body).toMatchObject({ success_url: 'https://buyer.example/thanks?x=1', cancel_url: 'https://buyer.example/cart' });
    const paid = await payOnPage(t, res.body.checkout_url, '4242 4242 4242 4242');
    expect(paid.status).toBe(303);
    expect(paid.headers.location).toBe('https://buyer.example/thanks?x=1');
  });

  it('declines 4000000000000002 with a 402 page and any other number with a 400 page; the session stays payable', async () => {
    const model = await publishModel(t, seller.key, { title: 'Declined', price_cents: 700 });
    const res = await openCheckout(t, buyer.key, { asset: model.id });
    const declined = await payOnPage(t, res.body.checkout_url, DECLINES);
    expect(declined.status).toBe(402);
    expect(declined.text).toContain('declined');
    const unknown = await payOnPage(t, res.body.checkout_url, '1234');
    expect(unknown.status).toBe(400);
    expect(await eventsOfType(t, 'PurchaseCompleted')).not.toContainEqual(expect.objectContaining({ data: expect.objectContaining({ session_id: res.body.id }) }));
    expect((await t.request('POST', `/v1/models/${model.id}/download`, { key: buyer.key })).status).toBe(402);
    expect((await payOnPage(t, res.body.checkout_url, PAYS)).status).toBe(200);
    expect((await t.request('POST', `/v1/models/${model.id}/download`, { key: buyer.key })).status).toBe(200);
  });

  it('records one purchase and one sale when the same session is paid many times at once', async () => {
    const model = await publishModel(t, seller.key, { title: 'Raced', price_cents: 1000 });
    const res = await openCheckout(t, buyer.key, { asset: model.id });
    const answers = await Promise.all(Array.from({ length: 6 }, () => payOnPage(t, res.body.checkout_url, PAYS)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const completed = (await eventsOfType(t, 'PurchaseCompleted')).filter((e) => e.data.session_id === res.body.id);
    expect(completed).toHaveLength(1);
    const purchaseId = completed[0].data.purchase_id;
    expect((await eventsOfType(t, 'SaleRecorded')).filter((e) => e.data.purchase_id === purchaseId)).toHaveLength(1);
  });

  it("returns the buyer's open session instead of opening another, so five opens paid five times buy once", async () => {
    const model = await publishModel(t, seller.key, { title: 'Opened often', price_cents: 1500 });
    const opened = await Promise.all(Array.from({ length: 5 }, () => openCheckout(t, buyer.key, { asset: model.id })));
    opened.push(await openCheckout(t, buyer.key, { asset: model.slug }));
    expect(opened.map((r) => r.status)).toEqual([201, 201, 201, 201, 201, 201]);
    const ids = new Set(opened.map((r) => r.body.id));
    expect(ids.size).toBe(1);
    expect(new Set(opened.map((r) => r.body.checkout_url)).size).toBe(1);

    const paid = await Promise.all(opened.map((r) => payOnPage(t, r.body.checkout_url, PAYS)));
    expect(paid.map((p) => p.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const bought = (await eventsOfType(t, 'PurchaseCompleted')).filter((e) => e.data.purchase.asset.id === model.id);
    expect(bought).toHaveLength(1);
    expect((await eventsOfType(t, 'SaleRecorded')).filter((e) => e.data.asset.id === model.id)).toHaveLength(1);
    expect((await t.request('GET', '/v1/purchases?limit=100', { key: buyer.key })).body.items.filter((p: any) => p.asset.id === model.id)).toHaveLength(1);
    const again = await openCheckout(t, buyer.key, { asset: model.id });
    expect([again.status, again.body.error?.code]).toEqual([400, 'invalid_request']);
    expect(await t.app.get(LedgerAudit).verify({})).toMatchObject({ ok: true });
  });

  it('refunds at once a payment that still completes for an asset already owned: no second purchase, no sale', async () => {
    const model = await publishModel(t, seller.key, { title: 'Paid twice', price_cents: 1900 });
    const first = await openCheckout(t, buyer.key, { asset: model.id });
    // Another replica whose clock runs ahead finds the first session expired and opens a second one.
    const second = await withClockAhead(PAST_EXPIRY_MS, () => openCheckout(t, buyer.key, { asset: model.id }));
    expect(second.status).toBe(201);
    expect(second.body.id).not.toBe(first.body.id);

    const paid = await Promise.all([payOnPage(t, first.body.checkout_url, PAYS), payOnPage(t, second.body.checkout_url, PAYS)]);
    expect(paid.map((p) => p.status)).toEqual([200, 200]);
    const sessions = [first.body.id, second.body.id];
    const completed = (await eventsOfType(t, 'PurchaseCompleted')).filter((e) => sessions.includes(e.data.session_id));
    const duplicates = (await eventsOfType(t, 'DuplicatePaymentReceived')).filter((e) => sessions.includes(e.data.session_id));
    expect(completed).toHaveLength(1);
    expect(duplicates.map((e) => e.data.session_id)).toEqual(sessions.filter((id) => id !== completed[0].data.session_id));
    expect(duplicates[0].data).toMatchObject({ owned_by_purchase_id: completed[0].data.purchase_id, amount_cents: 1900, currency: 'usd', buyer_account_id: buyer.accountId });
    const refunds = (await eventsOfType(t, 'DuplicatePaymentRefunded')).filter((e) => sessions.includes(e.data.session_id));
    expect(refunds.map((e) => [e.data.session_id, e.data.payment_reference, e.data.settled])).toEqual([[duplicates[0].data.session_id, duplicates[0].data.payment_reference, true]]);

    // The buyer owns it once; the seller sold it once; paying the duplicate again changes nothing.
    expect((await t.request('GET', '/v1/purchases?limit=100', { key: buyer.key })).body.items.filter((p: any) => p.asset.id === model.id)).toHaveLength(1);
    expect((await eventsOfType(t, 'SaleRecorded')).filter((e) => e.data.asset.id === model.id)).toHaveLength(1);
    const duplicateUrl = (completed[0].data.session_id === first.body.id ? second : first).body.checkout_url;
    expect((await t.request('GET', pathOf(duplicateUrl))).text).toContain('this payment of 19.00 USD was refunded');
    expect((await payOnPage(t, duplicateUrl, PAYS)).status).toBe(200);
    expect((await eventsOfType(t, 'DuplicatePaymentRefunded')).filter((e) => sessions.includes(e.data.session_id))).toHaveLength(1);
    expect((await t.request('POST', `/v1/models/${model.id}/download`, { key: buyer.key })).status).toBe(200);
    expect(await t.app.get(LedgerAudit).verify({})).toMatchObject({ ok: true });
  });

  it('rejects unknown, unpublished, free, own, already bought and other-mode assets with clear errors and records nothing', async () => {
    const before = (await eventsOfType(t, 'CheckoutSessionOpened')).length;
    const free = await publishModel(t, seller.key, { title: 'Free one', price_cents: 0 });
    const buyerUploads = await t.admin('POST', '/admin/keys', { account: buyer.accountId, mode: 'test' });
    const own = await publishModel(t, buyerUploads.body.key, { title: 'Own one', price_cents: 900 });
    const gone = await publishModel(t, seller.key, { title: 'Gone one', price_cents: 900 });
    expect((await t.request('DELETE', `/v1/models/${gone.id}`, { key: seller.key })).status).toBe(200);
    const bought = await publishModel(t, seller.key, { title: 'Bought one', price_cents: 900 });
    await buy(t, buyer.key, bought.id);
    const opened = (await eventsOfType(t, 'CheckoutSessionOpened')).length;
    const liveBuyer = await t.accountWithKey({ mode: 'live', scopes: ['models:read'] });

    const cases: [string, Record<string, unknown>, number, string][] = [
      [buyer.key, { asset: 'no-such-asset' }, 404, 'not_found'],
      [buyer.key, { asset: gone.id }, 404, 'not_found'],
      [liveBuyer.key, { asset: bought.id }, 404, 'not_found'],
      [buyer.key, { asset: free.id }, 400, 'invalid_request'],
      [buyer.key, { asset: own.id }, 400, 'invalid_request'],
      [buyer.key, { asset: bought.id }, 400, 'invalid_request'],
      [buyer.key, {}, 400, 'validation_failed'],
      [buyer.key, { asset: bought.id, success_url: 'javascript:alert(1)' }, 400, 'validation_failed'],
    ];
    for (const [key, body, status, code] of cases) {
      const res = await openCheckout(t, key, body);
      expect([JSON.stringify(body), res.status, res.body.error?.code]).toEqual([JSON.stringify(body), status, code]);
    }
    expect((await eventsOfType(t, 'CheckoutSessionOpened')).length).toBe(opened);
    expect(opened).toBe(before + 1);
  });

  it('needs a read scope, and keeps purchases of each mode apart', async () => {
    const payoutsOnly = await t.accountWithKey({ scopes: ['payouts:read'] });
    const res = await openCheckout(t, payoutsOnly.key, { asset: 'x' });
    expect([res.status, res.body.error.code]).toEqual([403, 'scope_required']);
    const live = await t.admin('POST', '/admin/keys', { account: buyer.accountId, mode: 'live', scopes: ['models:read'] });
    expect((await t.request('GET', '/v1/purchases', { key: live.body.key })).body.items).toEqual([]);
  });

  it('answers 404 pages for an unknown session and refuses an expired one', async () => {
    expect((await t.request('GET', '/checkout/cs_test_AAAAAAAAAAAAAAAAAAAAAAAA')).status).toBe(404);
    expect((await t.request('GET', '/checkout/nonsense')).status).toBe(404);
    const model = await publishModel(t, seller.key, { title: 'Expiring', price_cents: 800 });
    const res = await openCheckout(t, buyer.key, { asset: model.id });
    await withClockAhead(PAST_EXPIRY_MS, async () => {
      expect((await t.request('GET', pathOf(res.body.checkout_url))).status).toBe(400);
      const late = await payOnPage(t, res.body.checkout_url, PAYS);
      expect(late.status).toBe(400);
      expect(late.text).toContain('expired');
    });
    expect((await eventsOfType(t, 'PurchaseCompleted')).filter((e) => e.data.session_id === res.body.id)).toHaveLength(0);
  });
});
