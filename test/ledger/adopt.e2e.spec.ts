import { publishModel } from '../catalog/catalog-client';
import { buy, eventsOfType } from '../commerce/commerce-client';
import { PAYMENT_PROCESSOR, PaymentProcessor } from '../../src/payments/payment-processor';
import { startTestApp, TestApp } from '../support/app';
import { serveForCli, svc } from '../support/cli';

/**
 * Issue 38, defect 5: a processor refund the books never recorded (lost to a crash mid-refund;
 * here made straight on the sandbox processor, as the crash leaves it) stays missing_in_ledger
 * until `svc ledger adopt` books it, with its actor and reason, after which reconcile is clean.
 */
describe('svc ledger adopt: booking a movement the processor has and the books do not', () => {
  let t: TestApp;
  let seller: { accountId: string; key: string };
  let buyer: { accountId: string; key: string };
  let restoreEnv: () => void;

  beforeAll(async () => {
    t = await startTestApp();
    seller = await t.accountWithKey({ name: 'Adopting Seller' });
    buyer = await t.accountWithKey({ name: 'Adopting Buyer', scopes: ['models:read'] });
    restoreEnv = await serveForCli(t);
  });
  afterAll(async () => {
    restoreEnv();
    await t.close();
  });

  const purchaseOf = async (sessionId: string) =>
    (await t.request('GET', '/v1/purchases?limit=100', { key: buyer.key })).body.items.find((p: any) => p.checkout_session_id === sessionId);
  const paymentOf = async (purchaseId: string) => (await eventsOfType(t, 'PurchaseCompleted')).find((e) => e.data.purchase_id === purchaseId)!.data.payment_reference as string;
  const reconcile = async () => {
    const res = await svc('ledger', 'reconcile', '--mode', 'test', '--json');
    return { code: res.code, report: JSON.parse(res.stdout) };
  };
  /** A refund the processor made that no event of ours records: what a kill -9 between the two leaves. */
  const orphanRefund = (paymentReference: string, amountCents: number, key: string) =>
    t.app.get<PaymentProcessor>(PAYMENT_PROCESSOR).refund({ mode: 'test', paymentReference, idempotencyKey: key, amountCents });
  const counts = async () => {
    const types = ['ProcessorMovementAdopted', 'PurchasePartiallyRefunded', 'PurchaseRefunded', 'RefundRecorded'];
    return Object.fromEntries(await Promise.all(types.map(async (type) => [type, (await eventsOfType(t, type)).length])));
  };
  const adopt = (body: Record<string, unknown>) => t.admin('POST', '/admin/ledger/adopt', body);

  it('books an orphaned refund as its own event with actor and reason: reconcile clean, trial balance balanced, the purchase shows it', async () => {
    const model = await publishModel(t, seller.key, { title: 'Orphaned refund', price_cents: 2000 });
    const session = await buy(t, buyer.key, model.id);
    const purchase = await purchaseOf(session.id);
    const payment = await paymentOf(purchase.id);
    expect((await reconcile()).code).toBe(0);

    // The defect's story: 501 refunded at the processor and lost to a crash; the retry, with another amount, refunded 700.
    const orphan = await orphanRefund(payment, 501, 'refund-lost-to-a-crash');
    expect((await svc('purchases', 'refund', purchase.id, '--amount', '700', '--idempotency-key', 'ticket-4711-retry')).code).toBe(0);
    expect((await purchaseOf(session.id)).amount_refunded_cents).toBe(700);

    const before = await reconcile();
    expect(before.code).toBe(1);
    expect(before.report.missing_in_ledger).toEqual([expect.objectContaining({ kind: 'refund', processor_id: orphan.refundId, processor_cents: 501, ledger_cents: null })]);
    expect(before.report.missing_at_processor).toEqual([]);

    // Every wrong adoption is a clear 4xx and appends nothing.
    const unchanged = await counts();
    const retried = (await eventsOfType(t, 'PurchasePartiallyRefunded')).find((e) => e.data.purchase_id === purchase.id)!.data.processor_refund_id;
    const wrong = [
      [{ mode: 'test', processor_id: 're_unknownToTheProcessor', reason: 'x' }, 404, 'processor_record_not_found'],
      [{ mode: 'test', processor_id: retried, reason: 'booked already' }, 409, 'already_booked'],
      [{ mode: 'test', processor_id: payment, reason: 'a charge booked as its sale' }, 409, 'already_booked'],
      [{ mode: 'live', processor_id: orphan.refundId, reason: 'the other mode' }, 404, 'processor_record_not_found'],
      [{ mode: 'test', processor_id: orphan.refundId, reason: '' }, 400, 'validation_failed'],
      [{ mode: 'test', processor_id: orphan.refundId, reason: '   ' }, 400, 'validation_failed'],
      [{ mode: 'test', processor_id: orphan.refundId }, 400, 'validation_failed'],
      [{ mode: 'test', processor_id: 're_bad id!', reason: 'x' }, 400, 'validation_failed'],
      [{ mode: 'nope', processor_id: orphan.refundId, reason: 'x' }, 400, 'validation_failed'],
    ] as const;
    for (const [body, status, code] of wrong) {
      const res = await adopt(body);
      expect([body, res.status, res.body.error?.code]).toEqual([body, status, code]);
    }
    const noReason = await svc('ledger', 'adopt', orphan.refundId, '--mode', 'test');
    expect(noReason.code).toBe(2);
    expect(await counts()).toEqual(unchanged);
    expect((await reconcile()).report.missing_in_ledger).toHaveLength(1);

    const adopted = await svc('ledger', 'adopt', orphan.refundId, '--mode', 'test', '--reason', 'refund lost to a crash, ticket 4711', '--json');
    expect(adopted.code).toBe(0);
    expect(JSON.parse(adopted.stdout)).toMatchObject({
      object: 'adoption',
      kind: 'refund',
      processor_id: orphan.refundId,
      payment_reference: payment,
      amount_cents: 501,
      actor: 'admin',
      reason: 'refund lost to a crash, ticket 4711',
      purchase: { id: purchase.id, amount_refunded_cents: 1201, status: 'paid' },
    });
    const adoptions = (await eventsOfType(t, 'ProcessorMovementAdopted')).map((e) => e.data);
    expect(adoptions).toEqual([
      expect.objectContaining({ purchase_id: purchase.id, kind: 'refund', processor_id: orphan.refundId, amount_cents: 501, actor: 'admin', reason: 'refund lost to a crash, ticket 4711', booked_as: 'PurchasePartiallyRefunded' }),
    ]);
    expect((await eventsOfType(t, 'RefundRecorded')).filter((e) => e.data.processor_refund_id === orphan.refundId)).toHaveLength(1);

    // Reconcile is clean, the journal balances, the buyer's purchase and the seller's ledger show both refunds.
    expect(await reconcile()).toMatchObject({ code: 0, report: { ok: true, missing_in_ledger: [], missing_at_processor: [], amount_mismatches: [] } });
    const trial = await svc('ledger', 'trial-balance', '--mode', 'test', '--json');
    expect(trial.code).toBe(0);
    expect(JSON.parse(trial.stdout).balanced).toBe(true);
    expect(await purchaseOf(session.id)).toMatchObject({ id: purchase.id, amount_refunded_cents: 1201, status: 'paid' });
    const lines = (await t.request('GET', '/v1/balance_transactions', { key: seller.key })).body.items.filter((i: any) => i.source.purchase_id === purchase.id);
    expect(lines.map((i: any) => [i.type, i.amount_cents])).toEqual([['refund', -501], ['refund', -700], ['sale', 2000]]);
    expect((await svc('ledger', 'verify')).code).toBe(0);

    // Adopting it again books nothing more.
    const after = await counts();
    const again = await svc('ledger', 'adopt', orphan.refundId, '--mode', 'test', '--reason', 'twice');
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already_booked/);
    expect(await counts()).toEqual(after);
  });

  it('adopts an orphaned refund of the rest as the whole refund, once when two operators adopt it at the same time', async () => {
    const model = await publishModel(t, seller.key, { title: 'Orphaned whole refund', price_cents: 1500 });
    const session = await buy(t, buyer.key, model.id);
    const purchase = await purchaseOf(session.id);
    const orphan = await orphanRefund(await paymentOf(purchase.id), 1500, 'whole-refund-lost');
    const before = await counts();
    const [a, b] = await Promise.all([adopt({ mode: 'test', processor_id: orphan.refundId, reason: 'first' }), adopt({ mode: 'test', processor_id: orphan.refundId, reason: 'second' })]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    expect([a, b].find((r) => r.status === 409)!.body.error.code).toBe('already_booked');
    const after = await counts();
    expect(after).toEqual({ ...before, ProcessorMovementAdopted: before.ProcessorMovementAdopted + 1, PurchaseRefunded: before.PurchaseRefunded + 1, RefundRecorded: before.RefundRecorded + 1 });
    expect(await purchaseOf(session.id)).toMatchObject({ amount_refunded_cents: 1500, status: 'refunded' });
    // The whole purchase went back: the download is refused again.
    expect((await t.request('POST', `/v1/models/${model.id}/download`, { key: buyer.key })).status).toBe(402);
    expect((await reconcile()).code).toBe(0);
  });
});
