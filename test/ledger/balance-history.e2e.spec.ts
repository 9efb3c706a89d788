import { publishModel } from '../catalog/catalog-client';
import { buy } from '../commerce/commerce-client';
import { startTestApp, TestApp } from '../support/app';
import { eventually } from '../support/eventually';

const DAY = 24 * 3600_000;
const utcDay = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));

describe('GET /v1/balance/history and the balance transaction filters', () => {
  let t: TestApp;
  let seller: { accountId: string; key: string };
  let buyer: { accountId: string; key: string };
  let payoutId: string;
  let betweenPayouts: string;
  beforeAll(async () => {
    t = await startTestApp({ env: { PLATFORM_FEE_BPS: '1500' } });
    seller = await t.accountWithKey({ name: 'History Seller' });
    buyer = await t.accountWithKey();
    // Two sales, a refund of the second, a payout; then a third sale after it.
    const a = await publishModel(t, seller.key, { title: 'History A', price_cents: 2599 });
    const b = await publishModel(t, seller.key, { title: 'History B', price_cents: 1000 });
    const c = await publishModel(t, seller.key, { title: 'History C', price_cents: 500 });
    await buy(t, buyer.key, a.slug);
    const second = await buy(t, buyer.key, b.slug);
    const purchase = (await t.request('GET', '/v1/purchases?limit=100', { key: buyer.key })).body.items.find((p: any) => p.checkout_session_id === second.id);
    expect((await t.admin('POST', `/admin/purchases/${purchase.id}/refund`)).status).toBe(200);
    await eventually(async () => (await t.request('GET', '/v1/balance', { key: seller.key })).body.available_cents === 2209, 15000, 'the refund');
    payoutId = (await t.admin('POST', '/admin/payouts/run', { mode: 'test', account: seller.accountId })).body.items[0].id;
    await new Promise((r) => setTimeout(r, 5));
    betweenPayouts = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 5));
    await buy(t, buyer.key, c.slug);
    await eventually(async () => (await t.request('GET', '/v1/balance', { key: seller.key })).body.available_cents === 425, 15000, 'the third sale');
  });
  afterAll(() => t.close());

  it('gives each day its opening, its activity by category and its closing, each closing the next opening', async () => {
    const today = utcDay(new Date());
    const from = new Date(today.getTime() - DAY).toISOString();
    const to = new Date(today.getTime() + 2 * DAY).toISOString();
    const res = await t.request('GET', `/v1/balance/history?from=${from}&to=${to}&interval=day`, { key: seller.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'balance_history', interval: 'day', currency: 'usd' });
    const days = res.body.items;
    expect(days.map((d: any) => d.start)).toEqual([0, 1, 2].map((n) => new Date(today.getTime() + (n - 1) * DAY).toISOString()));
    const zero = { sales_cents: 0, fees_cents: 0, refunds_cents: 0, payouts_cents: 0, disputes_cents: 0, adjustments_cents: 0 };
    expect(days[0]).toMatchObject({ opening_balance_cents: 0, activity: zero, closing_balance_cents: 0 });
    // 2599 + 1000 + 500 sold; fees 390 + 150 + 75, 150 of them returned with the refund of 1000; 2209 paid out.
    expect(days[1]).toEqual({
      start: today.toISOString(),
      end: new Date(today.getTime() + DAY).toISOString(),
      opening_balance_cents: 0,
      activity: { sales_cents: 4099, fees_cents: -465, refunds_cents: -1000, payouts_cents: -2209, disputes_cents: 0, adjustments_cents: 0 },
      closing_balance_cents: 425,
    });
    expect(days[2]).toMatchObject({ opening_balance_cents: 425, activity: zero, closing_balance_cents: 425 });
    // The last closing is the balance the balance transactions add up to.
    expect((await t.request('GET', '/v1/balance_transactions', { key: seller.key })).body.summary.balance_cents).toBe(425);
  });

  it('rounds `from` down to its interval, by week (from Monday) or month', async () => {
    const weeks = await t.request('GET', '/v1/balance/history?from=2026-11-25T13:00:00Z&to=2026-12-01T00:00:00Z&interval=week', { key: seller.key });
    expect(weeks.body.items.map((w: any) => [w.start, w.end])).toEqual([['2026-11-23T00:00:00.000Z', '2026-11-30T00:00:00.000Z'], ['2026-11-30T00:00:00.000Z', '2026-12-07T00:00:00.000Z']]);
    const months = await t.request('GET', '/v1/balance/history?from=2026-01-15&to=2026-03-01&interval=month', { key: seller.key });
    expect(months.body.items.map((m: any) => m.start)).toEqual(['2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z']);
  });

  it.each([
    ['interval=hour', 'interval'],
    ['from=2026-10-02&to=2026-10-01', 'from'],
    ['from=2024-01-01&to=2026-01-01&interval=day', 'from'],
    ['from=last-week', 'from'],
    ['to=2026-13-01', 'to'],
  ])('answers 400 validation_failed naming the field for ?%s', async (q, field) => {
    const res = await t.request('GET', `/v1/balance/history?${q}`, { key: seller.key });
    expect([res.status, res.body.error.code]).toEqual([400, 'validation_failed']);
    expect(res.body.error.message).toContain(`"${field}"`);
  });

  it('gives every transaction its reporting category and the balance after it', async () => {
    const { items } = (await t.request('GET', '/v1/balance_transactions', { key: seller.key })).body;
    expect(items.map((i: any) => [i.type, i.reporting_category, i.net_cents, i.balance_after_cents])).toEqual([
      ['sale', 'charge', 425, 425],
      ['payout', 'payout', -2209, 0],
      ['refund', 'refund', -850, 2209],
      ['sale', 'charge', 850, 3059],
      ['sale', 'charge', 2209, 2209],
    ]);
    // The same on a later page and with a type filter: the balance after counts every line.
    const page = (await t.request('GET', `/v1/balance_transactions?limit=2&cursor=${items[1].id}`, { key: seller.key })).body;
    expect(page.items.map((i: any) => i.balance_after_cents)).toEqual([2209, 3059]);
    const sales = (await t.request('GET', '/v1/balance_transactions?type=sale', { key: seller.key })).body.items;
    expect(sales.map((i: any) => i.balance_after_cents)).toEqual([425, 3059, 2209]);
  });

  it('filters by creation time and by the payout that paid the entries out', async () => {
    const later = (await t.request('GET', `/v1/balance_transactions?created[gte]=${encodeURIComponent(betweenPayouts)}`, { key: seller.key })).body.items;
    expect(later.map((i: any) => [i.type, i.amount_cents])).toEqual([['sale', 500]]);
    const earlier = (await t.request('GET', `/v1/balance_transactions?created[lt]=${encodeURIComponent(betweenPayouts)}`, { key: seller.key })).body.items;
    expect(earlier.map((i: any) => i.type)).toEqual(['payout', 'refund', 'sale', 'sale']);

    const paidOut = (await t.request('GET', `/v1/balance_transactions?payout=${payoutId}`, { key: seller.key })).body.items;
    expect(paidOut.map((i: any) => [i.type, i.net_cents])).toEqual([['refund', -850], ['sale', 850], ['sale', 2209]]);
    const payout = (await t.request('GET', '/v1/payouts', { key: seller.key })).body.items.find((p: any) => p.id === payoutId);
    expect(paidOut.reduce((s: number, i: any) => s + i.net_cents, 0)).toBe(payout.amount_cents);
  });

  it('answers 404 for a payout of another account or none, and 400 for a malformed filter', async () => {
    const other = await t.accountWithKey();
    const res = await t.request('GET', `/v1/balance_transactions?payout=${payoutId}`, { key: other.key });
    expect([res.status, res.body.error.code]).toEqual([404, 'not_found']);
    expect((await t.request('GET', '/v1/balance_transactions?payout=po_doesnotexist', { key: seller.key })).status).toBe(404);
    for (const q of ['payout=txn_abc', 'created[gte]=yesterday', 'created[lt]=2026-02-30']) {
      const bad = await t.request('GET', `/v1/balance_transactions?${q}`, { key: seller.key });
      expect([q, bad.status, bad.body.error.code]).toEqual([q, 400, 'validation_failed']);
    }
  });
});
