import { startTestApp } from '../support/app';
import { ledgerDriver } from './support';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Amounts paid by racing payout runs; every run that paid nothing says nothing_to_pay. */
function paidOut(runs: PromiseSettledResult<{ items: { amount_cents: number }[] }>[]): number[] {
  for (const r of runs) if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'nothing_to_pay' });
  return runs.flatMap((r) => (r.status === 'fulfilled' ? r.value.items.map((p) => p.amount_cents) : []));
}

describe('creator ledger: sales, refunds, payouts and GET /v1/balance_transactions', () => {
  let t: Awaited<ReturnType<typeof startTestApp>>;
  let ledger: ReturnType<typeof ledgerDriver>;
  beforeAll(async () => {
    t = await startTestApp({ env: { PLATFORM_FEE_BPS: '1500' } });
    ledger = ledgerDriver(t);
  });
  afterAll(() => t.close());

  it('records a sale as a pending credit with the platform fee rounded half up', async () => {
    const { accountId, key } = await t.accountWithKey({ scopes: ['payouts:read'] });
    // 1010 x 15% = 151.5 -> 152; 1003 x 15% = 150.45 -> 150.
    const first = await ledger.sale(accountId, 'test', { purchase_id: 'pur_a', amount_cents: 1010 });
    await ledger.sale(accountId, 'test', { purchase_id: 'pur_b', amount_cents: 1003 });
    expect(first).toEqual({
      id: expect.stringMatching(/^txn_/),
      object: 'balance_transaction',
      type: 'sale',
      amount_cents: 1010,
      fee_cents: 152,
      net_cents: 858,
      currency: 'usd',
      status: 'pending',
      created_at: expect.stringMatching(ISO),
      source: { purchase_id: 'pur_a', asset: { slug: 'arm-policy', title: 'Arm policy' } },
      description: 'Sale of "Arm policy"',
    });
    const body = await ledger.balance(key);
    expect(body.items.map((i) => [i.source.purchase_id, i.fee_cents, i.status])).toEqual([
      ['pur_b', 150, 'pending'],
      ['pur_a', 152, 'pending'],
    ]);
    expect(body.items[1]).toEqual({ ...first, reporting_category: 'charge', balance_after_cents: 858 });
    expect(body.summary).toEqual({
      currency: 'usd',
      gross_cents: 2013,
      platform_fee_cents: 302,
      earned_cents: 1711,
      refunded_cents: 0,
      paid_out_cents: 0,
      balance_cents: 1711,
      sale_count: 2,
      refund_count: 0,
    });
    expect(body.payouts_paused).toBe(false);
  });

  it('records a repeated sale of the same purchase once and returns the first transaction', async () => {
    const { accountId, key } = await t.accountWithKey();
    const first = await ledger.sale(accountId, 'test', { purchase_id: 'pur_once' });
    const again = await ledger.sale(accountId, 'test', { purchase_id: 'pur_once', amount_cents: 5000 });
    expect(again).toEqual(first);
    const body = await ledger.balance(key);
    expect(body.items).toEqual([{ ...first, reporting_category: 'charge', balance_after_cents: 850 }]);
    expect(body.summary.sale_count).toBe(1);
  });

  it('rejects a malformed sale with the field named and records nothing', async () => {
    const { accountId, key } = await t.accountWithKey();
    const cases: [Record<string, unknown>, string][] = [
      [{ amount_cents: 0 }, 'amount_cents'],
      [{ amount_cents: 10.5 }, 'amount_cents'],
      [{ currency: 'USD' }, 'currency'],
      [{ purchase_id: '' }, 'purchase_id'],
      [{ asset: { id: 'a', slug: '', title: 't' } }, 'asset.slug'],
    ];
    for (const [overrides, field] of cases) {
      await expect(ledger.sale(accountId, 'test', overrides)).rejects.toMatchObject({
        status: 400,
        code: 'validation_failed',
        message: expect.stringContaining(`"${field}"`),
      });
    }
    await expect(ledger.sale(accountId, 'prod' as any)).rejects.toMatchObject({ status: 400, code: 'validation_failed' });
    await expect(ledger.sale('acct_nobody', 'test')).rejects.toMatchObject({ status: 404, code: 'not_found' });
    const { slug } = (await t.admin('GET', `/admin/accounts/${accountId}`)).body;
    await expect(ledger.sale(slug, 'test')).rejects.toMatchObject({ status: 404, code: 'not_found' });
    expect((await ledger.balance(key)).items).toEqual([]);
  });

  it('rejects a sale in another currency than the ledger keeps', async () => {
    const { accountId, key } = await t.accountWithKey();
    await ledger.sale(accountId, 'test', { currency: 'eur' });
    await expect(ledger.sale(accountId, 'test', { currency: 'usd' })).rejects.toMatchObject({ status: 400, code: 'currency_mismatch' });
    const body = await ledger.balance(key);
    expect(body.items).toHaveLength(1);
    expect(body.summary.currency).toBe('eur');
  });

  it('records a refund as the matching debit, once', async () => {
    const { accountId, key } = await t.accountWithKey();
    await ledger.sale(accountId, 'test', { purchase_id: 'pur_r', amount_cents: 2000 });
    await ledger.sale(accountId, 'test', { purchase_id: 'pur_keep', amount_cents: 1000 });
    const refund = await ledger.refund(accountId, 'test', 'pur_r');
    expect(refund).toMatchObject({
      type: 'refund',
      amount_cents: -2000,
      fee_cents: -300,
      net_cents: -1700,
      status: 'pending',
      source: { purchase_id: 'pur_r', asset: { slug: 'arm-policy', title: 'Arm policy' } },
      description: 'Refund of "Arm policy"',
    });
    const before = await ledger.balance(key);
    expect(before.summary).toMatchObject({
      gross_cents: 3000,
      platform_fee_cents: 150,
      earned_cents: 2850,
      refunded_cents: 2000,
      balance_cents: 850,
      sale_count: 2,
      refund_count: 1,
    });

    await expect(ledger.refund(accountId, 'test', 'pur_r')).rejects.toMatchObject({ status: 400, code: 'already_refunded' });
    await expect(ledger.refund(accountId, 'test', 'pur_unknown')).rejects.toMatchObject({ status: 404, code: 'sale_not_found' });
    // The sale is on the test ledger; the live ledger of the same account never saw it.
    await expect(ledger.refund(accountId, 'live', 'pur_keep')).rejects.toMatchObject({ status: 404, code: 'sale_not_found' });
    expect(await ledger.balance(key)).toEqual(before);
  });

  it('pays out the whole balance, marks what it included paid, and then has nothing to pay', async () => {
    const { accountId, key } = await t.accountWithKey({ scopes: ['payouts:read'] });
    await ledger.sale(accountId, 'test', { purchase_id: 'pur_p1', amount_cents: 1000 });
    await ledger.sale(accountId, 'test', { purchase_id: 'pur_p2', amount_cents: 3000 });
    const { items } = await ledger.payouts('test', accountId);
    expect(items).toEqual([
      {
        id: expect.stringMatching(/^po_/),
        object: 'payout',
        amount_cents: 3400,
        currency: 'usd',
        status: 'paid',
        created_at: expect.stringMatching(ISO),
        arrival_date: expect.stringMatching(ISO),
        failure_code: null,
        failure_message: null,
      },
    ]);
    await ledger.sale(accountId, 'test', { purchase_id: 'pur_p3', amount_cents: 100 });

    const body = await ledger.balance(key);
    expect(body.items.map((i) => [i.type, i.net_cents, i.status])).toEqual([
      ['sale', 85, 'pending'],
      ['payout', -3400, 'paid'],
      ['sale', 2550, 'paid'],
      ['sale', 850, 'paid'],
    ]);
    expect(body.items[1]).toMatchObject({ amount_cents: -3400, fee_cents: 0, source: { payout_id: items[0].id } });
    expect(body.summary).toMatchObject({ paid_out_cents: 3400, balance_cents: 85, earned_cents: 3485 });

    const payouts = await t.request('GET', '/v1/payouts', { key });
    expect(payouts.status).toBe(200);
    expect(payouts.body).toEqual({ items, next_cursor: null, has_more: false, amount_owed_cents: 85, currency: 'usd', payouts_paused: false, payouts_pause: null });

    expect((await ledger.payouts('test', accountId)).items.map((p: any) => p.amount_cents)).toEqual([85]);
    await expect(ledger.payouts('test', accountId)).rejects.toMatchObject({ status: 400, code: 'nothing_to_pay' });
  });

  it('never pays more than the balance when payout runs race', async () => {
    const { accountId, key } = await t.accountWithKey();
    for (let i = 0; i < 3; i++) await ledger.sale(accountId, 'test', { amount_cents: 1000 });
    const runs = await Promise.allSettled(Array.from({ length: 4 }, () => ledger.payouts('test', accountId)));
    expect(paidOut(runs)).toEqual([2550]);
    expect((await ledger.balance(key)).summary).toMatchObject({ paid_out_cents: 2550, balance_cents: 0 });
  });

  it('never pays more than the balance when two service instances run payouts at once', async () => {
    const second = await startTestApp({ shared: t.database });
    try {
      const { accountId, key } = await t.accountWithKey();
      for (let i = 0; i < 2; i++) await ledger.sale(accountId, 'test', { amount_cents: 2000 });
      const other = ledgerDriver(second);
      const runs = await Promise.allSettled([ledger.payouts('test', accountId), other.payouts('test', accountId), other.payouts('test', accountId)]);
      expect(paidOut(runs)).toEqual([3400]);
      expect((await ledger.balance(key)).summary).toMatchObject({ paid_out_cents: 3400, balance_cents: 0 });
    } finally {
      await second.close();
    }
  });

  it('pays nothing from a zero or negative balance, and says so', async () => {
    const { accountId, key } = await t.accountWithKey();
    await expect(ledger.payouts('test', accountId)).rejects.toMatchObject({ status: 400, code: 'nothing_to_pay' });
    await ledger.sale(accountId, 'test', { purchase_id: 'pur_n', amount_cents: 1000 });
    await ledger.payouts('test', accountId);
    await ledger.refund(accountId, 'test', 'pur_n');
    await expect(ledger.payouts('test', accountId)).rejects.toMatchObject({ status: 400, code: 'nothing_to_pay', message: expect.stringContaining('-850') });
    const body = await ledger.balance(key);
    expect(body.summary).toMatchObject({ balance_cents: -850, paid_out_cents: 850, refunded_cents: 1000 });
    const payouts = await t.request('GET', '/v1/payouts', { key });
    expect(payouts.body.amount_owed_cents).toBe(0);
  });

  it('keeps test and live ledgers apart', async () => {
    const { accountId, key: testKey } = await t.accountWithKey({ mode: 'test' });
    const live = await t.admin('POST', '/admin/keys', { account: accountId, mode: 'live' });
    await ledger.sale(accountId, 'test', { amount_cents: 1000 });
    await ledger.sale(accountId, 'live', { amount_cents: 4000 });
    expect((await ledger.balance(testKey)).summary.gross_cents).toBe(1000);
    expect((await ledger.balance(live.body.key)).summary.gross_cents).toBe(4000);
    const { items } = await ledger.payouts('live', accountId);
    expect(items.map((p: any) => p.amount_cents)).toEqual([3400]);
    expect((await ledger.balance(testKey)).summary).toMatchObject({ paid_out_cents: 0, balance_cents: 850 });
  });

  it('filters by type, clamps limit and pages with the cursor', async () => {
    const { accountId, key } = await t.accountWithKey();
    for (let i = 1; i <= 5; i++) await ledger.sale(accountId, 'test', { purchase_id: `pur_pg${i}`, amount_cents: 1000 * i });
    await ledger.refund(accountId, 'test', 'pur_pg1');
    await ledger.payouts('test', accountId);

    const refunds = await t.request('GET', '/v1/balance_transactions?type=refund', { key });
    expect(refunds.body.items.map((i: any) => i.type)).toEqual(['refund']);
    // The summary covers the whole ledger whatever the filter says.
    expect(refunds.body.summary.sale_count).toBe(5);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await t.request('GET', `/v1/balance_transactions?type=sale&limit=2${cursor ? `&cursor=${cursor}` : ''}`, { key });
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.items.map((i: any) => i.source.purchase_id));
      cursor = page.body.next_cursor;
      expect(page.body.has_more).toBe(cursor !== null);
    } while (cursor);
    expect(seen).toEqual(['pur_pg5', 'pur_pg4', 'pur_pg3', 'pur_pg2', 'pur_pg1']);

    const clamped = await t.request('GET', '/v1/balance_transactions?limit=100000', { key });
    expect(clamped.body.items).toHaveLength(7);
    const low = await t.request('GET', '/v1/balance_transactions?limit=0', { key });
    expect(low.body.items).toHaveLength(1);
  });

  it('answers 400 validation_failed for a bad type, limit or cursor', async () => {
    const { accountId, key } = await t.accountWithKey();
    const other = await t.accountWithKey();
    await ledger.sale(other.accountId, 'test');
    const foreign = (await ledger.balance(other.key)).items[0].id;
    await ledger.sale(accountId, 'test');
    for (const query of ['type=charge', 'type=sale&type=refund', 'limit=ten', 'cursor=nonsense', `cursor=${foreign}`]) {
      const res = await t.request('GET', `/v1/balance_transactions?${query}`, { key });
      expect({ query, status: res.status, code: res.body.error.code }).toEqual({ query, status: 400, code: 'validation_failed' });
    }
    const payouts = await t.request('GET', `/v1/payouts?cursor=${foreign}`, { key });
    expect(payouts.status).toBe(400);
  });

  it('needs payouts:read', async () => {
    const { key } = await t.accountWithKey({ scopes: ['models:read'] });
    for (const url of ['/v1/balance_transactions', '/v1/payouts']) {
      const res = await t.request('GET', url, { key });
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'scope_required', scope: 'payouts:read' });
    }
    expect((await t.request('GET', '/v1/payouts')).status).toBe(401);
  });

  it('shows an empty ledger with a zero summary', async () => {
    const { key } = await t.accountWithKey();
    expect(await ledger.balance(key)).toEqual({
      items: [],
      summary: {
        currency: 'usd',
        gross_cents: 0,
        platform_fee_cents: 0,
        earned_cents: 0,
        refunded_cents: 0,
        paid_out_cents: 0,
        balance_cents: 0,
        sale_count: 0,
        refund_count: 0,
      },
      payouts_paused: false,
      payouts_pause: null,
      next_cursor: null,
      has_more: false,
    });
  });
});
