import { publishModel } from '../catalog/catalog-client';
import { ADMIN_TOKEN, startTestApp, TestApp } from '../support/app';
import { CheckoutStreams } from '../../src/commerce/checkout-streams';
import { serveForCli, svc } from '../support/cli';
import { createEndpoint } from '../webhooks/helpers';
import { eventually } from '../support/eventually';
import { startReceiver } from '../webhooks/receiver';
import { buy, eventsOfType } from './commerce-client';

describe('refunds (svc purchases refund) and what a purchase tells the seller', () => {
  let t: TestApp;
  let seller: { accountId: string; key: string };
  let buyer: { accountId: string; key: string };
  let restoreEnv: () => void;

  beforeAll(async () => {
    t = await startTestApp();
    seller = await t.accountWithKey({ name: 'Seller Co' });
    buyer = await t.accountWithKey({ name: 'Buyer Inc', scopes: ['models:read'] });
    restoreEnv = await serveForCli(t);
  });
  afterAll(async () => {
    restoreEnv();
    await t.close();
  });

  const purchaseOf = async (sessionId: string) =>
    (await t.request('GET', '/v1/purchases?limit=100', { key: buyer.key })).body.items.find((p: any) => p.checkout_session_id === sessionId);

  it('refunds through the CLI: the purchase turns refunded, the download is 402 again and the seller ledger has the matching debit', async () => {
    const model = await publishModel(t, seller.key, { title: 'Refundable', price_cents: 2000 });
    const session = await buy(t, buyer.key, model.id);
    const purchase = await purchaseOf(session.id);

    const res = await svc('purchases', 'refund', purchase.id, '--json');
    expect(res.code).toBe(0);
    expect(purchase.amount_refunded_cents).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({ ...purchase, amount_refunded_cents: 2000, status: 'refunded' });
    expect(await purchaseOf(session.id)).toEqual({ ...purchase, amount_refunded_cents: 2000, status: 'refunded' });
    expect((await t.request('POST', `/v1/models/${model.id}/download`, { key: buyer.key })).status).toBe(402);

    const balance = (await t.request('GET', '/v1/balance_transactions', { key: seller.key })).body;
    const lines = balance.items.filter((i: any) => i.source.purchase_id === purchase.id).map((i: any) => [i.type, i.amount_cents, i.fee_cents, i.net_cents]);
    expect(lines).toEqual([
      ['refund', -2000, -300, -1700],
      ['sale', 2000, 300, 1700],
    ]);

    // Bought again after the refund: a new purchase, entitled again.
    await buy(t, buyer.key, model.id);
    expect((await t.request('POST', `/v1/models/${model.id}/download`, { key: buyer.key })).status).toBe(200);
  });

  it('refuses an unknown or already refunded purchase with a clear error and records nothing', async () => {
    const model = await publishModel(t, seller.key, { title: 'Once', price_cents: 1500 });
    const purchase = await purchaseOf((await buy(t, buyer.key, model.id)).id);
    expect((await svc('purchases', 'refund', purchase.id)).code).toBe(0);
    const refundsBefore = (await eventsOfType(t, 'RefundRecorded')).length;

    const again = await svc('purchases', 'refund', purchase.id);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^svc: already_refunded: /);
    const unknown = await svc('purchases', 'refund', 'pur_doesnotexist');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^svc: not_found: /);
    expect((await svc('purchases', 'refund')).code).toBe(2);

    expect((await eventsOfType(t, 'RefundRecorded')).length).toBe(refundsBefore);
    expect((await eventsOfType(t, 'PurchaseRefunded')).filter((e) => e.data.purchase_id === purchase.id)).toHaveLength(1);
  });

  it('refunds part of a purchase with --amount: the purchase stays paid, the seller gives back that part with the fee in proportion, and the rest refunds what is left', async () => {
    const model = await publishModel(t, seller.key, { title: 'Refunded in parts', price_cents: 2599 });
    const session = await buy(t, buyer.key, model.id);
    const purchase = await purchaseOf(session.id);
    const lines = async () =>
      (await t.request('GET', '/v1/balance_transactions?limit=200', { key: seller.key })).body.items
        .filter((i: any) => i.source.purchase_id === purchase.id)
        .map((i: any) => [i.type, i.amount_cents, i.fee_cents, i.net_cents]);
    const processorRefunds = async () =>
      (await t.db.query<{ amount_cents: string }>(`SELECT amount_cents FROM sandbox_processor_records WHERE kind = 'refund' AND payment_id = $1 ORDER BY created_at`, [
        (await eventsOfType(t, 'PurchaseCompleted')).find((e) => e.data.purchase_id === purchase.id)!.data.payment_reference,
      ])).rows.map((r) => Number(r.amount_cents));

    const part = await svc('purchases', 'refund', purchase.id, '--amount', '1000');
    expect([part.code, part.stdout]).toEqual([0, `refund of 1000 usd of ${purchase.id} requested; the purchase stays paid\n`]);
    expect((await purchaseOf(session.id)).status).toBe('paid');
    expect((await t.request('POST', `/v1/models/${model.id}/download`, { key: buyer.key })).status).toBe(200);
    // 1,000 of 2,599 at 15% (fee 390): 150 of the fee back, rounded half up.
    expect(await lines()).toEqual([
      ['refund', -1000, -150, -850],
      ['sale', 2599, 390, 2209],
    ]);

    // Bad amounts are refused before the processor is asked, and change nothing.
    for (const amount of ['0', '-5', '1600', '10.5', 'ten']) {
      const bad = await svc('purchases', 'refund', purchase.id, '--amount', amount);
      expect(bad.code).toBeGreaterThan(0);
      expect(bad.stderr).toMatch(/amount/);
    }
    const tooMuch = await t.admin('POST', `/admin/purchases/${purchase.id}/refund`, { amount_cents: 1600 });
    expect([tooMuch.status, tooMuch.body.error.code, tooMuch.body.error.message]).toEqual([400, 'validation_failed', expect.stringContaining('between 1 and 1599')]);
    expect((await t.admin('POST', `/admin/purchases/${purchase.id}/refund`, { amount_cents: 'all' })).status).toBe(400);
    expect(await processorRefunds()).toEqual([1000]);

    // The rest: what is left of the payment, and the fee's rest, so the sale gives back exactly its fee.
    expect((await svc('purchases', 'refund', purchase.id)).code).toBe(0);
    expect((await purchaseOf(session.id)).status).toBe('refunded');
    expect(await lines()).toEqual([
      ['refund', -1599, -240, -1359],
      ['refund', -1000, -150, -850],
      ['sale', 2599, 390, 2209],
    ]);
    expect(await processorRefunds()).toEqual([1000, 1599]);
    const reconciled = JSON.parse((await svc('ledger', 'reconcile', '--mode', 'test', '--json')).stdout);
    expect(reconciled.missing_in_ledger.filter((i: any) => i.kind === 'refund')).toEqual([]);
    expect(reconciled.amount_mismatches).toEqual([]);
  });

  // Issue 38, defect 3: each part's fee rounded on its own gave 29 three-cent parts no fee and
  // the rest (13 cents) the whole 15 of it: a refund line netting +2 and a negative debit to
  // the creator's payable. The fee returned so far is the fee on the total refunded so far.
  it('returns the fee cumulatively: 29 parts of 3 cents then the rest of a 100-cent sale never net positive nor post a negative amount', async () => {
    const model = await publishModel(t, seller.key, { title: 'Refunded by the cent', price_cents: 100 });
    const purchase = await purchaseOf((await buy(t, buyer.key, model.id)).id);
    for (let i = 0; i < 29; i++) {
      const part = await t.admin('POST', `/admin/purchases/${purchase.id}/refund`, { amount_cents: 3 });
      expect(part.status).toBe(200);
    }
    expect((await t.admin('POST', `/admin/purchases/${purchase.id}/refund`)).status).toBe(200);
    const items = (await t.request('GET', '/v1/balance_transactions?limit=200', { key: seller.key })).body.items.filter((i: any) => i.source.purchase_id === purchase.id);
    const refunds = items.filter((i: any) => i.type === 'refund');
    expect(refunds).toHaveLength(30);
    for (const r of refunds) expect(r.net_cents).toBeLessThanOrEqual(0);
    expect(refunds.reduce((s: number, r: any) => s + r.fee_cents, 0)).toBe(-15);
    expect(refunds.reduce((s: number, r: any) => s + r.amount_cents, 0)).toBe(-100);
    // The rest: 13 cents, of the fee 15 - round(15 x 87 / 100) = 2.
    expect([refunds[0].amount_cents, refunds[0].fee_cents, refunds[0].net_cents]).toEqual([-13, -2, -11]);
    const negative = await t.db.query(`SELECT posting_id FROM journal_postings WHERE debit_cents < 0 OR credit_cents < 0`);
    expect(negative.rows).toEqual([]);
    const verified = await svc('ledger', 'verify', '--mode', 'test', '--json');
    expect([verified.code, JSON.parse(verified.stdout).journal.problems]).toEqual([0, []]);
  });

  it('records one refund when the same purchase is refunded concurrently', async () => {
    const model = await publishModel(t, seller.key, { title: 'Raced refund', price_cents: 1200 });
    const purchase = await purchaseOf((await buy(t, buyer.key, model.id)).id);
    const answers = await Promise.all(Array.from({ length: 20 }, () => t.admin('POST', `/admin/purchases/${purchase.id}/refund`)));
    // Only the refund that was recorded answers 200; every other one learns it came too late.
    expect(answers.filter((a) => a.status === 200).map((a) => a.body)).toEqual([{ ...purchase, amount_refunded_cents: 1200, status: 'refunded' }]);
    for (const a of answers.filter((x) => x.status !== 200)) expect([a.status, a.body.error.code]).toEqual([400, 'already_refunded']);
    expect((await eventsOfType(t, 'PurchaseRefunded')).filter((e) => e.data.purchase_id === purchase.id)).toHaveLength(1);
    expect((await eventsOfType(t, 'RefundRecorded')).filter((e) => e.data.purchase_id === purchase.id)).toHaveLength(1);
  });

  // Issue 38, defect 6: 20 concurrent refunds of 300 on a 1,000 purchase all answered 200
  // while 600 was refunded: requests that read the same state shared one processor refund.
  it('answers 2xx only for a partial refund that happened: 20 concurrent refunds of 300 of 1,000', async () => {
    const model = await publishModel(t, seller.key, { title: 'Raced parts', price_cents: 1000 });
    const session = await buy(t, buyer.key, model.id);
    const purchase = await purchaseOf(session.id);
    const answers = await Promise.all(Array.from({ length: 20 }, () => t.admin('POST', `/admin/purchases/${purchase.id}/refund`, { amount_cents: 300 })));
    const ok = answers.filter((a) => a.status === 200);
    // Refused: raced at the processor (409), or read after the others were recorded (400 naming what is left).
    for (const a of answers.filter((x) => x.status !== 200)) {
      expect([[409, 'refund_exceeds_remaining'], [400, 'validation_failed']]).toContainEqual([a.status, a.body.error.code]);
    }
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(ok.length).toBeLessThanOrEqual(3);
    const refunded = 300 * ok.length;
    const payment = (await eventsOfType(t, 'PurchaseCompleted')).find((e) => e.data.purchase_id === purchase.id)!.data.payment_reference;
    const atProcessor = await t.db.query<{ sum: string }>(`SELECT COALESCE(sum(amount_cents), 0) AS sum FROM sandbox_processor_records WHERE kind = 'refund' AND payment_id = $1`, [payment]);
    expect(Number(atProcessor.rows[0].sum)).toBe(refunded);
    const lines = (await t.request('GET', '/v1/balance_transactions?limit=200', { key: seller.key })).body.items.filter((i: any) => i.type === 'refund' && i.source.purchase_id === purchase.id);
    expect(lines.reduce((sum: number, l: any) => sum - l.amount_cents, 0)).toBe(refunded);
    // Both views of the purchase show what went back; it stays paid until all of it has.
    expect(await purchaseOf(session.id)).toEqual({ ...purchase, amount_refunded_cents: refunded, status: 'paid' });
    expect(ok.at(-1)!.body).toMatchObject({ id: purchase.id, status: 'paid' });
    const rest = await t.admin('POST', `/admin/purchases/${purchase.id}/refund`);
    expect(rest.body).toEqual({ ...purchase, amount_refunded_cents: 1000, status: 'refunded' });
    expect(await purchaseOf(session.id)).toEqual({ ...purchase, amount_refunded_cents: 1000, status: 'refunded' });
  });

  // Issue 38, defect 5: after a crash mid-refund, a retry made a second processor refund.
  // With an Idempotency-Key, the retry is the same processor refund, recorded once.
  it('refunds once when a refund killed after the processor call is retried with the same Idempotency-Key (svc purchases refund --idempotency-key)', async () => {
    const model = await publishModel(t, seller.key, { title: 'Retried after a crash', price_cents: 1000 });
    const session = await buy(t, buyer.key, model.id);
    const purchase = await purchaseOf(session.id);
    const payment = (await eventsOfType(t, 'PurchaseCompleted')).find((e) => e.data.purchase_id === purchase.id)!.data.payment_reference;
    const atProcessor = async () =>
      (await t.db.query<{ amount_cents: string }>(`SELECT amount_cents FROM sandbox_processor_records WHERE kind = 'refund' AND payment_id = $1`, [payment])).rows.map((r) => Number(r.amount_cents));
    const withKey = (key: string, body: unknown) =>
      t.request('POST', `/admin/purchases/${purchase.id}/refund`, { body, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'idempotency-key': key } });

    // The processor refunds, then the process dies before the refund is recorded.
    const killed = jest.spyOn(t.app.get(CheckoutStreams), 'handle').mockRejectedValueOnce(new Error('killed after the processor refunded'));
    try {
      expect((await withKey('ticket-4711', { amount_cents: 501 })).status).toBe(500);
    } finally {
      killed.mockRestore();
    }
    expect(await atProcessor()).toEqual([501]);

    const retried = await svc('purchases', 'refund', purchase.id, '--amount', '501', '--idempotency-key', 'ticket-4711', '--json');
    expect(retried.code).toBe(0);
    expect(JSON.parse(retried.stdout)).toMatchObject({ id: purchase.id, status: 'paid', amount_refunded_cents: 501 });
    // Again, and with the same key for another amount: nothing more moves.
    expect((await withKey('ticket-4711', { amount_cents: 501 })).body).toMatchObject({ amount_refunded_cents: 501 });
    const other = await withKey('ticket-4711', { amount_cents: 200 });
    expect([other.status, other.body.error.code]).toEqual([400, 'idempotency_key_reused']);
    expect(await atProcessor()).toEqual([501]);
    const lines = (await t.request('GET', '/v1/balance_transactions?limit=200', { key: seller.key })).body.items.filter((i: any) => i.type === 'refund' && i.source.purchase_id === purchase.id);
    expect(lines.map((l: any) => l.amount_cents)).toEqual([-501]);
    const bad = await withKey('has space', { amount_cents: 5 });
    expect([bad.status, bad.body.error.code, bad.body.error.message]).toEqual([400, 'validation_failed', expect.stringContaining('Idempotency-Key')]);
    expect(await atProcessor()).toEqual([501]);
  });

  it('sends listing.purchased to the seller with the purchase and the listing', async () => {
    const receiver = await startReceiver();
    try {
      const endpoint = await createEndpoint(t, seller.key, receiver.url, ['listing.purchased']);
      const model = await publishModel(t, seller.key, { title: 'Announced', price_cents: 3000 });
      const session = await buy(t, buyer.key, model.id);
      const purchase = await purchaseOf(session.id);
      const [event] = await eventually(() => receiver.events().length > 0 && receiver.events(), 15000, 'listing.purchased');
      expect(event).toMatchObject({
        type: 'listing.purchased',
        data: { purchase, listing: { id: model.id, slug: model.slug, title: 'Announced', price: { amount: 3000, currency: 'usd' } } },
      });
      expect(endpoint.id).toMatch(/^we_/);
    } finally {
      await receiver.close();
    }
  });

  it('sends purchase.refunded to the seller with the purchase as refunded, and tells the buyer nothing', async () => {
    const receiver = await startReceiver();
    const buyerReceiver = await startReceiver();
    try {
      await createEndpoint(t, seller.key, receiver.url, ['purchase.refunded']);
      const buyerWithHooks = await t.accountWithKey();
      await createEndpoint(t, buyerWithHooks.key, buyerReceiver.url, ['purchase.refunded']);
      const model = await publishModel(t, seller.key, { title: 'Taken Back', price_cents: 1500 });
      const session = await buy(t, buyerWithHooks.key, model.id);
      const purchase = (await t.request('GET', '/v1/purchases?limit=100', { key: buyerWithHooks.key })).body.items.find((p: any) => p.checkout_session_id === session.id);
      expect((await svc('purchases', 'refund', purchase.id)).code).toBe(0);
      const [event] = await eventually(() => receiver.events().length > 0 && receiver.events(), 15000, 'purchase.refunded');
      expect(event).toMatchObject({ type: 'purchase.refunded', data: { purchase: { ...purchase, amount_refunded_cents: 1500, status: 'refunded' } } });
      expect(buyerReceiver.received).toHaveLength(0);
    } finally {
      await receiver.close();
      await buyerReceiver.close();
    }
  });
});
