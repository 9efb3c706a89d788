import { publishModel } from '../catalog/catalog-client';
import { buy } from '../commerce/commerce-client';
import { money } from '../../src/console/format';
import { ADMIN_TOKEN, startTestApp, TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { chartData, charts, ConsoleBrowser, consoleBrowser, sidewaysAt, textOf } from './browser';
import { ConsoleClient } from './console-client';

/**
 * Issue 26, the ledger for finance: the trial balance, the journal and its CSV, reconciliation
 * with the processor and platform revenue against processor fees per day, each checked against
 * the operator API on the money this test makes (sales, a refund, a payout).
 */
const PRICES = [2500, 1200, 999];
const REFUNDED = 1200;
/** PLATFORM_FEE_BPS 1500 and the sandbox's 2.9% + 30, each rounded half up. */
const platformFee = (cents: number) => Math.round((cents * 1500) / 10_000);
const processorFee = (cents: number) => Math.round((cents * 290) / 10_000) + 30;

describe('the ledger pages of the console (issue 26)', () => {
  let t: TestApp;
  let b: ConsoleBrowser;
  let seller: { accountId: string; key: string };
  const today = new Date().toISOString().slice(0, 10);

  const api = async (url: string) => {
    const res = await t.admin('GET', url);
    expect(res.status).toBe(200);
    return res.body;
  };
  const allPostings = async (query = '') => (await api(`/admin/ledger/journal?mode=test&limit=5000${query}`)).items as { posting_id: string; account: string }[];

  beforeAll(async () => {
    t = await startTestApp();
    b = await consoleBrowser(t);
    seller = await t.accountWithKey({ scopes: ['models:upload', 'payouts:read'], name: 'Ledger Robotics' });
    const buyer = await t.accountWithKey({ scopes: ['models:read'] });
    const sessions: Record<number, string> = {};
    for (const price of PRICES) {
      const model = await publishModel(t, seller.key, { title: `Arm at ${price}`, price_cents: price });
      sessions[price] = (await buy(t, buyer.key, model.id)).id;
    }
    const purchases = (await t.request('GET', '/v1/purchases?limit=100', { key: buyer.key })).body.items;
    const refunded = purchases.find((p: any) => p.checkout_session_id === sessions[REFUNDED]);
    expect((await t.admin('POST', `/admin/purchases/${refunded.id}/refund`, {})).status).toBe(200);

    const owed = PRICES.filter((p) => p !== REFUNDED).reduce((sum, p) => sum + p - platformFee(p), 0);
    await eventually(async () => (await t.request('GET', '/v1/balance', { key: seller.key })).body.available_cents === owed, 20_000, 'the sales and the refund on the balance');
    const run = await t.admin('POST', '/admin/payouts/run', { mode: 'test' });
    expect(run.body.items).toEqual([expect.objectContaining({ amount_cents: owed, status: 'paid' })]);
    // The journal has read everything: the payout's transfer, and every item reconciles.
    await eventually(async () => (await api('/admin/ledger/reconcile?mode=test')).ok, 20_000, 'the books to reconcile');
  }, 120_000);
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it('shows the trial balance, balanced and as the API has it, and revenue against processor fees per day from the sales', async () => {
    const { page, errors } = await b.open();
    await b.signIn(page, 'operator', ADMIN_TOKEN);
    await b.visit(page, errors, '/console/ledger', 'ledger-trial-balance');

    const expected = await api('/admin/ledger/trial-balance?mode=test');
    expect(expected.balanced).toBe(true);
    expect(await page.$eval('[data-balanced]', (el) => el.getAttribute('data-balanced'))).toBe('true');
    const total = await page.$eval('tr[data-total="usd"]', (tr) => [Number(tr.getAttribute('data-debits')), Number(tr.getAttribute('data-credits'))]);
    expect(total).toEqual([expected.currency_totals[0].debits_cents, expected.currency_totals[0].credits_cents]);
    expect(total[0]).toBe(total[1]);
    // Every account of the API's trial balance, with its numbers, in the same order.
    const rows = await page.$$eval('tr[data-account]', (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent!.trim())));
    expect(rows).toEqual(
      expected.accounts.map((a: any) => [a.account, expect.any(String), a.currency, money(a.debits_cents), money(a.credits_cents), money(a.balance_cents)]),
    );
    expect(rows.map((r) => r[0])).toEqual(expect.arrayContaining(['processor:clearing', 'platform:fee_revenue', 'platform:processor_fees', `creator:${seller.accountId}:payable`]));

    // Today's revenue is the platform's fee on the sales that stayed sold; the refund gave its fee back.
    const [drawn] = await charts(page);
    expect(drawn).toEqual({ points: 30, painted: true });
    const { series } = await chartData(page, 0);
    expect(series.map((s) => s.label)).toEqual(['Platform revenue', 'Processor fees']);
    const revenue = PRICES.filter((p) => p !== REFUNDED).reduce((sum, p) => sum + platformFee(p), 0);
    // The processor keeps its fee on a refunded payment.
    const fees = PRICES.reduce((sum, p) => sum + processorFee(p), 0);
    expect([series[0].values.at(-1), series[1].values.at(-1)]).toEqual([revenue, fees]);
    expect(series[0].values.slice(0, -1).every((v) => v === 0)).toBe(true);
    const byAccount = (name: string) => expected.accounts.find((a: any) => a.account === name).balance_cents;
    expect([revenue, fees]).toEqual([byAccount('platform:fee_revenue'), byAccount('platform:processor_fees')]);

    // As of the end of yesterday nothing had happened yet; as of the end of today, everything.
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    await b.visit(page, errors, `/console/ledger?as_of=${yesterday}`, 'ledger-trial-balance-as-of');
    expect(await page.$$('tr[data-account]')).toEqual([]);
    expect((await api(`/admin/ledger/trial-balance?mode=test&as_of=${yesterday}T23:59:59.999Z`)).accounts).toEqual([]);
    await page.goto(`${b.base}/console/ledger?as_of=${today}`, { waitUntil: 'load' });
    expect(await page.$$eval('tr[data-account]', (trs) => trs.length)).toBe(expected.accounts.length);
    expect(errors).toEqual([]);
  });

  it('lists the journal’s postings with filters and the API’s cursor, and its CSV holds the same rows', async () => {
    const { page, errors } = await b.open();
    await b.signIn(page, 'operator', ADMIN_TOKEN);
    const postings = await allPostings();
    // Three sales, their processor fees, a refund and a payout, initiated and paid.
    expect(postings).toHaveLength(3 * 3 + 3 * 2 + 3 + 2 * 2);
    await b.visit(page, errors, '/console/ledger/journal', 'ledger-journal');
    // On a phone the page does not scroll sideways (its table scrolls in its own box).
    expect(await sidewaysAt(page, 390, 'ledger-journal-390')).toBe(0);
    const ids = () => page.$$eval('tr[data-posting]', (trs) => trs.map((tr) => tr.getAttribute('data-posting')));
    expect(await ids()).toEqual(postings.map((p) => p.posting_id));

    // The next page after a posting is the API's, by the same cursor.
    const cursor = postings[9].posting_id;
    await page.goto(`${b.base}/console/ledger/journal?cursor=${encodeURIComponent(cursor)}`, { waitUntil: 'load' });
    expect(await ids()).toEqual((await allPostings(`&cursor=${encodeURIComponent(cursor)}`)).map((p) => p.posting_id));

    // One account, picked from the form.
    await page.goto(`${b.base}/console/ledger/journal`, { waitUntil: 'load' });
    await page.select('#account', 'platform:fee_revenue');
    await page.$eval('#from', (el, day) => el.setAttribute('value', day), today);
    await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('form.filters button[type="submit"]')]);
    expect(page.url()).toContain('account=platform%3Afee_revenue');
    const feeLines = await allPostings('&account=platform:fee_revenue');
    expect(feeLines).toHaveLength(4);
    expect(await ids()).toEqual(feeLines.map((p) => p.posting_id));

    // The CSV of all the postings: the API's rows, in its order, with the documented columns.
    const csv = await page.evaluate(async () => (await fetch('/console/ledger/journal?format=csv')).text());
    const lines = csv.trimEnd().split('\r\n');
    expect(lines[0]).toBe('posting_id,event_id,event_type,position,recorded_at,mode,account,currency,debit_cents,credit_cents,reference,processor_ref');
    const full = (await api('/admin/ledger/journal?mode=test&limit=5000')).items;
    expect(lines.slice(1)).toEqual(
      full.map((p: any) => [p.posting_id, p.event_id, p.event_type, p.position, p.recorded_at, p.mode, p.account, p.currency, p.debit_cents, p.credit_cents, p.reference ?? '', p.processor_ref ?? ''].join(',')),
    );
    // The download keeps the filters.
    const filtered = await page.evaluate(async (day) => (await fetch(`/console/ledger/journal?format=csv&account=platform:fee_revenue&from=${day}&to=${day}`)).text(), today);
    expect(filtered.trimEnd().split('\r\n')).toHaveLength(1 + 4);
    expect(errors).toEqual([]);
  });

  it('reconciles our books with the processor’s: everything matched, as the API says', async () => {
    const { page, errors } = await b.open();
    await b.signIn(page, 'operator', ADMIN_TOKEN);
    await b.visit(page, errors, '/console/ledger/reconcile', 'ledger-reconcile');
    const report = await api('/admin/ledger/reconcile?mode=test');
    // Three charges, their three fees, a refund and a transfer.
    expect(report).toMatchObject({ ok: true, matched: 8 });
    expect(await page.$eval('[data-reconciled]', (el) => el.getAttribute('data-reconciled'))).toBe('true');
    const counts = await page.$$eval('[data-count]', (els) => Object.fromEntries(els.map((el) => [el.getAttribute('data-count'), el.textContent])));
    expect(counts).toEqual({ matched: '8', missing_in_ledger: '0', missing_at_processor: '0', amount_mismatches: '0' });
    const kinds = await page.$$eval('tr[data-kind]', (trs) => Object.fromEntries(trs.map((tr) => [tr.getAttribute('data-kind'), tr.children[2].textContent])));
    expect(kinds).toEqual({ charge: '3', fee: '3', refund: '1', transfer: '1' });
    expect(await page.$('[data-differences]')).toBeNull();
    // Today alone is the same day of business.
    await page.goto(`${b.base}/console/ledger/reconcile?from=${today}&to=${today}`, { waitUntil: 'load' });
    expect(await page.$eval('[data-count="matched"]', (el) => el.textContent)).toBe('8');
    expect(errors).toEqual([]);
  });

  it('names what is missing or altered on either side when the books differ', async () => {
    const c = new ConsoleClient(t, '10.0.7.1');
    await c.signInAsOperator();
    const { rows } = await t.db.query<{ id: string }>(`SELECT id FROM sandbox_processor_records WHERE mode = 'test' AND kind = 'charge' ORDER BY created_at LIMIT 1`);
    await t.db.query(`INSERT INTO sandbox_processor_records (id, mode, kind, amount_cents, currency, session_id) VALUES ('sbx_pay_console_ghost', 'test', 'charge', 4321, 'usd', 'cs_console_ghost')`);
    await t.db.query('UPDATE sandbox_processor_records SET amount_cents = amount_cents + 1 WHERE id = $1', [rows[0].id]);
    try {
      const res = await c.get('/console/ledger/reconcile');
      expect(res.status).toBe(200);
      expect(res.text).toContain('data-reconciled="false"');
      expect(res.text).toMatch(/data-differences="missing_in_ledger"[\s\S]*sbx_pay_console_ghost[\s\S]*\$43\.21/);
      expect(res.text).toMatch(new RegExp(`data-differences="amount_mismatches"[\\s\\S]*${rows[0].id}`));
      const { page, errors } = await b.open();
      await b.signIn(page, 'operator', ADMIN_TOKEN);
      await b.visit(page, errors, '/console/ledger/reconcile', 'ledger-reconcile-differences');
    } finally {
      await t.db.query(`DELETE FROM sandbox_processor_records WHERE id = 'sbx_pay_console_ghost'`);
      await t.db.query('UPDATE sandbox_processor_records SET amount_cents = amount_cents - 1 WHERE id = $1', [rows[0].id]);
    }
    expect((await api('/admin/ledger/reconcile?mode=test')).ok).toBe(true);
  });

  it('reconciles the last two UTC days unless asked, and the whole history a link away', async () => {
    const c = new ConsoleClient(t, '10.0.7.5');
    await c.signInAsOperator();
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    // A charge the processor recorded three days ago that we never booked: outside the default period.
    await t.db.query(
      `INSERT INTO sandbox_processor_records (id, mode, kind, amount_cents, currency, session_id, created_at) VALUES ('sbx_pay_console_old', 'test', 'charge', 777, 'usd', 'cs_console_old', now() - interval '3 days')`,
    );
    try {
      const unasked = await c.get('/console/ledger/reconcile');
      expect(unasked.text).toContain(`id="from" name="from" type="date" value="${yesterday}"`);
      expect(unasked.text).toContain(`id="to" name="to" type="date" value="${today}"`);
      expect(unasked.text).toContain('data-reconciled="true"');
      expect(unasked.text).toContain('data-count="matched">8<');

      const whole = await c.get('/console/ledger/reconcile?period=all');
      expect(whole.text).toContain('from the start to now');
      expect(whole.text).toContain('data-reconciled="false"');
      expect(whole.text).toMatch(/data-differences="missing_in_ledger"[\s\S]*sbx_pay_console_old[\s\S]*\$7\.77/);
      expect(whole.text).toContain('data-count="matched">8<');
    } finally {
      await t.db.query(`DELETE FROM sandbox_processor_records WHERE id = 'sbx_pay_console_old'`);
    }
  });

  it('refuses a creator, shows bad dates and cursors as clear errors on the page, and keeps the modes apart', async () => {
    const creator = new ConsoleClient(t, '10.0.7.2');
    await creator.signIn('creator', seller.key);
    for (const url of ['/console/ledger', '/console/ledger/journal', '/console/ledger/reconcile', '/console/ledger/journal?format=csv']) {
      const res = await creator.get(url);
      expect([url, res.status]).toEqual([url, 403]);
      expect(res.text).toContain('This page is for operators');
    }

    const c = new ConsoleClient(t, '10.0.7.3');
    await c.signInAsOperator();
    const bad: [string, RegExp][] = [
      ['/console/ledger?as_of=last-tuesday', /Invalid field &quot;as_of&quot;: must be an ISO 8601 date/],
      ['/console/ledger?as_of=2026-02-30', /Invalid field &quot;as_of&quot;/],
      ['/console/ledger/journal?from=yesterday', /&quot;from&quot; must be a UTC day such as 2026-01-31/],
      ['/console/ledger/journal?from=2026-03-02&to=2026-03-01', /&quot;from&quot; must not be after &quot;to&quot;/],
      ['/console/ledger/journal?cursor=nope', /Invalid field &quot;cursor&quot;: not a cursor this list returned/],
      ['/console/ledger/journal?account=platform:nothing', /There is no account &quot;platform:nothing&quot; in the test journal/],
      ['/console/ledger/reconcile?to=2026-13-01', /Invalid field &quot;to&quot;/],
    ];
    for (const [url, message] of bad) {
      const res = await c.get(url);
      expect([url, res.status]).toEqual([url, 200]);
      expect(res.text).toMatch(/<p class="notice error" role="alert">/);
      expect(res.text).toMatch(message);
      // The form is still there to correct the value.
      expect(res.text).toContain('<form class="filters"');
    }
    const badCsv = await c.get('/console/ledger/journal?format=csv&from=soon');
    expect(badCsv.status).toBe(400);
    expect(badCsv.text).toContain('must be a UTC day');

    // The live books are apart: nothing there.
    const live = new ConsoleClient(t, '10.0.7.4');
    await live.signInAsOperator('live');
    const tb = await live.get('/console/ledger');
    expect(tb.text).toContain('No postings in live mode');
    expect(tb.text).toContain('data-balanced="true"');
    expect((await live.get('/console/ledger/journal')).text).toContain('data-rows="0"');
    expect((await live.get('/console/ledger/reconcile')).text).toContain('data-count="matched">0<');
  });

  it('shows the page as text, never as markup, whatever the query holds', async () => {
    const { page, errors } = await b.open();
    await b.signIn(page, 'operator', ADMIN_TOKEN);
    const res = await page.goto(`${b.base}/console/ledger/journal?account=${encodeURIComponent('<img src=x onerror=alert(1)>')}`, { waitUntil: 'load' });
    expect(res?.status()).toBe(200);
    expect(await textOf(page)).toContain('There is no account "<img src=x onerror=alert(1)>"');
    expect(await page.$('main img')).toBeNull();
    expect(b.dialogs).toEqual([]);
    expect(errors).toEqual([]);
  });
});
