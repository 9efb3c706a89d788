import { publishModel } from '../catalog/catalog-client';
import { buy, openCheckout, payOnPage, PAST_EXPIRY_MS, PAYS, withClockAhead } from '../commerce/commerce-client';
import { startTestApp, TestApp } from '../support/app';
import { serveForCli, svc } from '../support/cli';
import { eventually } from '../support/eventually';

/**
 * svc ledger reconcile against the sandbox processor, whose own books (what it charged, kept
 * as fees, refunded and transferred) are kept apart from our event log.
 */
describe('svc ledger reconcile: the journal against the processor’s own records', () => {
  let t: TestApp;
  let restoreEnv: () => void;
  beforeAll(async () => {
    t = await startTestApp();
    restoreEnv = await serveForCli(t);
  });
  afterAll(async () => {
    restoreEnv();
    await t.close();
  });

  const reconcile = async (...args: string[]) => {
    const res = await svc('ledger', 'reconcile', '--mode', 'test', '--json', ...args);
    return { code: res.code, report: JSON.parse(res.stdout), stderr: res.stderr };
  };
  const records = async (kind: string) => (await t.db.query(`SELECT * FROM sandbox_processor_records WHERE mode = 'test' AND kind = $1 ORDER BY created_at`, [kind])).rows;

  it('matches every charge, fee, refund and transfer of a day of business, and nothing is missing on either side', async () => {
    const seller = await t.accountWithKey({ name: 'Reconciled Seller' });
    const buyer = await t.accountWithKey();
    const model = await publishModel(t, seller.key, { title: 'Reconciled Arm', price_cents: 2500 });
    const refunded = await publishModel(t, seller.key, { title: 'Refunded Arm', price_cents: 1200 });
    await buy(t, buyer.key, model.slug);
    const session = await buy(t, buyer.key, refunded.slug);
    const purchase = (await t.request('GET', '/v1/purchases?limit=100', { key: buyer.key })).body.items.find((p: any) => p.checkout_session_id === session.id);
    expect((await svc('purchases', 'refund', purchase.id)).code).toBe(0);
    // A duplicate payment: charged, and refunded at once.
    const twice = await publishModel(t, seller.key, { title: 'Paid Twice', price_cents: 900 });
    const first = await openCheckout(t, buyer.key, { asset: twice.id });
    const second = await withClockAhead(PAST_EXPIRY_MS, () => openCheckout(t, buyer.key, { asset: twice.id }));
    await Promise.all([payOnPage(t, first.body.checkout_url, PAYS), payOnPage(t, second.body.checkout_url, PAYS)]);
    expect((await t.admin('POST', '/admin/payouts/run', { mode: 'test' })).status).toBe(200);

    // Posting the paid form again charges the session no second time.
    expect((await payOnPage(t, first.body.checkout_url, PAYS)).status).toBe(200);
    expect(await records('charge')).toHaveLength(4);
    expect(await records('fee')).toHaveLength(4);
    expect(await records('refund')).toHaveLength(2);
    expect(await records('transfer')).toHaveLength(1);

    const { code, report } = await eventually(async () => {
      const r = await reconcile();
      return r.code === 0 && r;
    }, 15000, 'the books to reconcile');
    expect(code).toBe(0);
    expect(report).toEqual({ mode: 'test', from: null, to: null, ok: true, matched: 11, missing_in_ledger: [], missing_at_processor: [], amount_mismatches: [] });
    const text = await svc('ledger', 'reconcile', '--mode', 'test');
    expect(text.stdout).toBe('reconciled test start .. now with the processor: 11 matched\n');
    // The other mode's books are apart: nothing there.
    expect((await svc('ledger', 'reconcile', '--mode', 'live', '--json')).stdout).toContain('"matched": 0');
  });

  it('names, by the processor’s id, a record missing or altered on either side, and exits 1', async () => {
    const [charge] = await records('charge');
    const [fee] = await records('fee');
    const [transfer] = await records('transfer');
    // Their side: a charge we never booked, and one of theirs altered.
    await t.db.query(`INSERT INTO sandbox_processor_records (id, mode, kind, amount_cents, currency, session_id) VALUES ('sbx_pay_ghost', 'test', 'charge', 777, 'usd', 'cs_ghost')`);
    await t.db.query('UPDATE sandbox_processor_records SET amount_cents = amount_cents + 1 WHERE id = $1', [charge.id]);
    // Our side: a transfer the processor never made (its record gone), and one of our fees altered.
    await t.db.query('DELETE FROM sandbox_processor_records WHERE id = $1', [transfer.id]);
    await t.db.query(`UPDATE journal_postings SET credit_cents = credit_cents + 5 WHERE processor_ref = $1 AND account = 'processor:clearing'`, [fee.id]);

    const { code, report, stderr } = await reconcile();
    expect(code).toBe(1);
    expect(JSON.parse(stderr).error.code).toBe('ledger_unreconciled');
    expect(report.ok).toBe(false);
    expect(report.matched).toBe(8);
    expect(report.missing_in_ledger).toEqual([{ kind: 'charge', processor_id: 'sbx_pay_ghost', currency: 'usd', ledger_cents: null, processor_cents: 777, event_ids: [] }]);
    expect(report.missing_at_processor).toEqual([
      { kind: 'transfer', processor_id: transfer.id, currency: 'usd', ledger_cents: Number(transfer.amount_cents), processor_cents: null, event_ids: [expect.any(String)] },
    ]);
    expect(report.amount_mismatches.map((i: any) => [i.kind, i.processor_id, i.ledger_cents - i.processor_cents])).toEqual(
      expect.arrayContaining([
        ['charge', charge.id, -1],
        ['fee', fee.id, 5],
      ]),
    );
    expect(report.amount_mismatches).toHaveLength(2);
    const text = await svc('ledger', 'reconcile', '--mode', 'test');
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(`missing in the ledger: charge sbx_pay_ghost: ledger -, processor 777 usd`);
    expect(text.stdout).toContain(`missing at the processor: transfer ${transfer.id}`);
  });

  it('reconciles only a period when asked, and refuses a bad one', async () => {
    const future = await reconcile('--from', '2099-01-01');
    expect(future.report).toMatchObject({ from: '2099-01-01T00:00:00.000Z', to: null, ok: true, matched: 0 });
    const reversed = await svc('ledger', 'reconcile', '--mode', 'test', '--from', '2026-10-01', '--to', '2026-09-01');
    expect(reversed.code).toBe(1);
    expect(reversed.stderr).toContain('validation_failed');
    expect((await t.admin('GET', '/admin/ledger/reconcile?mode=test&to=whenever')).body.error.message).toContain('"to"');
    expect((await t.admin('GET', '/admin/ledger/reconcile')).body.error.message).toContain('"mode"');
  });
});
