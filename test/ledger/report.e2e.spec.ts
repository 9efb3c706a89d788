import { publishModel } from '../catalog/catalog-client';
import { buy, DISPUTED, PAYS, payOnPage, withClockAhead } from '../commerce/commerce-client';
import { Accounts } from '../../src/ledger/journal';
import { startTestApp, TestApp } from '../support/app';
import { serveForCli, svc } from '../support/cli';
import { eventually } from '../support/eventually';
import { ledgerDriver, storedJournal } from './support';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const DAY_MS = 86_400_000;

/** An RFC 4180 CSV as written by the CLI (quoted cells with "" inside), as rows of cells. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') row.push(cell), (cell = '');
    else if (ch === '\n') row.push(cell), rows.push(row), (row = []), (cell = '');
    else cell += ch;
  }
  row.push(cell);
  rows.push(row);
  return rows;
}

/**
 * Issue 38, section 3, "Reports finance asks for": svc ledger report (GET /admin/ledger/report)
 * over a live period with sales at odd cents, a partial refund, a lost dispute, a key
 * activation and a payout, checked against the journal's own postings (PGlite by default;
 * DATABASE_URL for Postgres).
 */
describe('svc ledger report: income statement, balance sheet, fee reconciliation and payouts from the journal', () => {
  let t: TestApp;
  let restoreEnv: () => void;
  let seller: { accountId: string; key: string };
  let from: string;
  let to: string;
  let payoutId: string;
  beforeAll(async () => {
    t = await startTestApp({ env: { PLATFORM_FEE_BPS: '1500' } });
    restoreEnv = await serveForCli(t);
    from = new Date().toISOString();
    await pause(5);
    seller = await t.accountWithKey({ mode: 'live', name: 'Report Robotics' });
    const buyer = await t.accountWithKey({ mode: 'live' });
    const [odd, small, disputed] = [
      await publishModel(t, seller.key, { title: 'Odd Arm', price_cents: 1999 }),
      await publishModel(t, seller.key, { title: 'Small Gripper', price_cents: 333 }),
      await publishModel(t, seller.key, { title: 'Disputed Wrist', price_cents: 777 }),
    ];
    const oddSession = await buy(t, buyer.key, odd.slug);
    await buy(t, buyer.key, small.slug);
    await buy(t, buyer.key, disputed.slug, DISPUTED);

    // A partial refund of the 1,999-cent sale.
    const purchases = (await t.request('GET', '/v1/purchases?limit=100', { key: buyer.key })).body.items;
    const oddPurchase = purchases.find((p: any) => p.checkout_session_id === oddSession.id);
    const refunded = await t.admin('POST', `/admin/purchases/${oddPurchase.id}/refund`, { amount_cents: 701 });
    expect(refunded.status).toBe(200);

    // The dispute is lost: the buyer keeps the 777, the platform its fee on it.
    const [dispute] = await eventually(async () => {
      const open = (await t.admin('GET', '/admin/disputes?mode=live&status=open')).body.items;
      return open.length ? open : undefined;
    }, 15000, 'the dispute');
    expect((await t.admin('POST', `/admin/disputes/${dispute.id}/close`, { outcome: 'lost', reason: 'bank decided for the buyer' })).status).toBe(200);

    // A premium live key's activation fee.
    const premium = await t.admin('POST', '/admin/keys', { account: buyer.accountId, mode: 'live', tier: 'premium' });
    expect((await payOnPage(t, premium.body.activation_checkout_url, PAYS)).status).toBe(200);

    // Every payment's processor fee booked, the dispute closed in the creator ledger, then the payout.
    await eventually(async () => {
      const journal = (await storedJournal(t)).filter((p) => p.mode === 'live');
      const fees = new Set(journal.filter((p) => p.event_type === 'ProcessorFeeCharged').map((p) => p.event_id));
      return fees.size === 4 && journal.some((p) => p.event_type === 'DisputeClosed') && journal.some((p) => p.event_type === 'RefundRecorded');
    }, 15000, 'the processor fees, the refund and the dispute in the journal');
    const run = await t.admin('POST', '/admin/payouts/run', { mode: 'live', account: seller.accountId });
    expect(run.body.items).toEqual([expect.objectContaining({ status: 'paid' })]);
    payoutId = run.body.items[0].id;
    await pause(5);
    to = new Date(Date.now() + 1).toISOString();
  });
  afterAll(async () => {
    restoreEnv();
    await t.close();
  });

  const report = async (query: string) => t.admin('GET', `/admin/ledger/report?${query}`);
  const live = (f = from, t2 = to) => `mode=live&from=${encodeURIComponent(f)}&to=${encodeURIComponent(t2)}`;

  it('answers statements whose every figure is a sum of the period’s journal postings, a balance sheet that balances, and a payout with the lines it paid', async () => {
    const res = await eventually(async () => {
      const r = await report(live());
      return r.status === 200 && r.body.payouts.length === 1 && r.body.ok && r.body.currencies[0].fee_reconciliation.creators.length === 1 && r;
    }, 15000, 'a report that reconciles');
    const body = res.body;
    expect(body).toMatchObject({ object: 'ledger_report', mode: 'live', from, to, checks: { balance_sheets_balance: true, net_income_is_change_in_equity: true, fee_revenue_reconciles: true, payouts_match: true } });
    expect(body.currencies.map((c: any) => c.currency)).toEqual(['usd']);
    const [usd] = body.currencies;

    // The journal's own postings of the period, re-added here.
    const postings = (await storedJournal(t)).filter((p) => p.mode === 'live' && p.recorded_at >= from && p.recorded_at < to);
    const credit = (account: string, type?: string) =>
      postings.filter((p) => p.account === account && (!type || p.event_type === type)).reduce((s, p) => s + p.credit_cents - p.debit_cents, 0);
    const disputeFees = 0 - credit(Accounts.processorFees, 'DisputeOpened');
    expect(usd.income_statement).toEqual({
      fee_revenue_cents: credit(Accounts.feeRevenue),
      activation_revenue_cents: 2000,
      processor_fees_cents: 0 - credit(Accounts.processorFees) - disputeFees,
      dispute_fees_cents: disputeFees,
      adjustments_cents: 0,
      net_income_cents: credit(Accounts.feeRevenue) + credit(Accounts.activationRevenue) + credit(Accounts.processorFees) + credit(Accounts.adjustments),
    });
    expect(credit(Accounts.activationRevenue)).toBe(2000);
    // The sandbox's dispute fee (15 USD) and 2.9% + 30 on each of the four payments, rounded per payment.
    expect(disputeFees).toBe(1500);
    expect(usd.income_statement.processor_fees_cents).toBe([1999, 333, 777, 2000].reduce((s, a) => s + Math.round(a * 0.029) + 30, 0));

    // The balance sheet at `to` is the trial balance as of `to`, grouped; it balances.
    const trial = (await t.admin('GET', `/admin/ledger/trial-balance?mode=live&as_of=${encodeURIComponent(to)}`)).body;
    const balanceOf = (account: string) => trial.accounts.find((a: any) => a.account === account)?.balance_cents ?? 0;
    const sheet = usd.balance_sheet;
    expect(sheet.at).toBe(to);
    expect(sheet.assets).toMatchObject({ clearing_cents: balanceOf(Accounts.clearing), disputes_open_cents: 0, receivables_cents: 0 });
    expect(sheet.liabilities).toEqual({ payables_cents: balanceOf(Accounts.payable(seller.accountId)), in_transit_cents: 0, withheld_cents: 0, suspense_cents: 0, total_cents: 0 });
    expect(sheet.equity.retained_earnings_cents).toBe(balanceOf(Accounts.feeRevenue) + balanceOf(Accounts.activationRevenue) - balanceOf(Accounts.processorFees));
    expect(sheet.assets.total_cents).toBe(sheet.liabilities.total_cents + sheet.equity.total_cents);
    expect(sheet.balanced).toBe(true);
    // Nothing was booked before the period: the opening sheet is empty, and the period's net income is all the equity.
    expect(usd.opening_balance_sheet).toMatchObject({ at: from, balanced: true, equity: { retained_earnings_cents: 0 } });
    expect(usd.income_statement.net_income_cents).toBe(sheet.equity.retained_earnings_cents);

    // The creator's balance transactions' platform fees reconcile to platform:fee_revenue, the lost dispute's fee the reconciling item.
    const lines = (await t.request('GET', '/v1/balance_transactions?limit=100', { key: seller.key })).body.items as any[];
    const creatorFees = lines.filter((l) => l.type === 'sale' || l.type === 'refund').reduce((s, l) => s + l.fee_cents, 0);
    const lostFee = lines.find((l) => l.type === 'sale' && l.amount_cents === 777).fee_cents;
    expect(lostFee).toBe(117);
    expect(usd.fee_reconciliation).toEqual({
      creators_platform_fees_cents: creatorFees,
      lost_disputes_cents: lostFee,
      adjustments_cents: 0,
      booked_in_another_period_cents: 0,
      fee_revenue_cents: creatorFees - lostFee,
      unexplained_cents: 0,
      reconciles: true,
      creators: [{ account_id: seller.accountId, sales_fee_cents: 300 + 50 + 117, refunds_fee_cents: -105, platform_fee_cents: creatorFees }],
    });

    // The payout paid the sales, the partial refund and the dispute's withholding: their nets add up to it.
    const [payout] = body.payouts;
    const paidLines = lines.filter((l) => l.type !== 'payout');
    expect(payout).toMatchObject({ payout_id: payoutId, account_id: seller.accountId, currency: 'usd', status: 'paid', failed_at: null, matches: true });
    expect(payout.balance_transactions.map((l: any) => l.id).sort()).toEqual(paidLines.map((l) => l.id).sort());
    expect(payout.lines_net_cents).toBe(paidLines.reduce((s, l) => s + l.net_cents, 0));
    expect(payout.amount_cents).toBe(payout.lines_net_cents);
    expect(payout.amount_cents).toBe(0 - lines.find((l) => l.type === 'payout').amount_cents);
  });

  it('two adjoining periods add up to the whole: the cut-off is at-or-after `from`, strictly before `to`', async () => {
    const whole = (await report(live())).body.currencies[0];
    const postings = (await storedJournal(t)).filter((p) => p.mode === 'live' && p.event_type === 'RefundRecorded');
    // The refund's own booking instant: it belongs to the second period, not the first.
    const mid = postings[0].recorded_at;
    const [first, second] = [(await report(live(from, mid))).body, (await report(live(mid, to))).body];
    expect(first.currencies[0].income_statement.fee_revenue_cents + second.currencies[0].income_statement.fee_revenue_cents).toBe(whole.income_statement.fee_revenue_cents);
    expect(first.currencies[0].income_statement.net_income_cents + second.currencies[0].income_statement.net_income_cents).toBe(whole.income_statement.net_income_cents);
    expect(second.currencies[0].fee_reconciliation.creators[0].refunds_fee_cents).toBe(-105);
    expect(first.currencies[0].fee_reconciliation.creators[0].refunds_fee_cents).toBe(0);
    // The first period's closing sheet is the second's opening one.
    expect(second.currencies[0].opening_balance_sheet).toEqual(first.currencies[0].balance_sheet);
    expect(first.ok && second.ok).toBe(true);
  });

  it('svc ledger report prints the statements, --json the API answer, --csv one figure a row', async () => {
    const api = (await report(live())).body;
    const json = await svc('ledger', 'report', '--mode', 'live', '--from', from, '--to', to, '--json');
    expect([json.code, json.stderr]).toEqual([0, '']);
    expect(JSON.parse(json.stdout)).toEqual(api);

    const text = await svc('ledger', 'report', '--mode', 'live', '--from', from, '--to', to);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`ledger report, live mode, ${from} .. ${to} (to exclusive)`);
    expect(text.stdout).toContain(`  net income           ${api.currencies[0].income_statement.net_income_cents}\n`);
    expect(text.stdout).toMatch(new RegExp(`${payoutId}\\s+${seller.accountId}\\s+paid\\s+${api.payouts[0].amount_cents}\\s+usd\\s+\\d+\\s+${api.payouts[0].amount_cents}\\s+yes`));

    const csv = await svc('ledger', 'report', '--mode', 'live', '--from', from, '--to', to, '--csv');
    expect(csv.code).toBe(0);
    const [header, ...rows] = parseCsv(csv.stdout.trimEnd());
    expect(header).toEqual(['section', 'item', 'currency', 'amount_cents', 'account_id', 'payout_id', 'balance_transaction_id', 'purchase_id']);
    const figure = (section: string, item: string) => rows.filter((r) => r[0] === section && r[1] === item).map((r) => Number(r[3]));
    const usd = api.currencies[0];
    expect(figure('income_statement', 'net_income')).toEqual([usd.income_statement.net_income_cents]);
    expect(figure('income_statement', 'activation_revenue')).toEqual([2000]);
    expect(figure('balance_sheet', 'assets.clearing')).toEqual([usd.balance_sheet.assets.clearing_cents]);
    expect(figure('balance_sheet', 'liabilities.payables')).toEqual([usd.balance_sheet.liabilities.payables_cents]);
    expect(figure('fee_reconciliation', 'lost_disputes')).toEqual([117]);
    expect(figure('fee_reconciliation', 'unexplained')).toEqual([0]);
    expect(rows.filter((r) => r[0] === 'fee_reconciliation' && r[1] === 'creator_platform_fees')).toEqual([
      ['fee_reconciliation', 'creator_platform_fees', 'usd', String(usd.fee_reconciliation.creators[0].platform_fee_cents), seller.accountId, '', '', ''],
    ]);
    expect(rows.filter((r) => r[0] === 'payout')).toEqual([['payout', 'paid', 'usd', String(api.payouts[0].amount_cents), seller.accountId, payoutId, '', '']]);
    const payoutLines = rows.filter((r) => r[0] === 'payout_line');
    expect(payoutLines.map((r) => r[6]).sort()).toEqual(api.payouts[0].balance_transactions.map((l: any) => l.id).sort());
    expect(payoutLines.reduce((s, r) => s + Number(r[3]), 0)).toBe(api.payouts[0].amount_cents);
    expect(rows.every((r) => r.length === header.length && r[2] === 'usd')).toBe(true);
  });

  it('refuses a missing mode, a missing or impossible date, an instant without its offset and from not before to, each naming the field', async () => {
    const bad = async (query: string, message: RegExp) => {
      const res = await report(query);
      expect([res.status, res.body.error.code]).toEqual([400, 'validation_failed']);
      expect(res.body.error.message).toMatch(message);
    };
    await bad('from=2026-10-01&to=2026-11-01', /^Invalid field "mode"/);
    await bad('mode=bogus&from=2026-10-01&to=2026-11-01', /^Invalid field "mode"/);
    await bad('mode=live&to=2026-11-01', /^Invalid field "from": required/);
    await bad('mode=live&from=2026-10-01', /^Invalid field "to": required/);
    await bad('mode=live&from=2026-02-30&to=2026-11-01', /^Invalid field "from": must be an ISO 8601 date/);
    await bad('mode=live&from=2026-10-01&to=november', /^Invalid field "to": must be an ISO 8601 date/);
    await bad('mode=live&from=2026-10-01T00:00:00&to=2026-11-01', /^Invalid field "from": a date-time needs an offset/);
    await bad('mode=live&from=2026-11-01&to=2026-10-01', /^Invalid field "from": must be before "to"/);
    await bad('mode=live&from=2026-10-01&to=2026-10-01', /^Invalid field "from": must be before "to"/);

    const noMode = await svc('ledger', 'report', '--from', '2026-10-01', '--to', '2026-11-01');
    expect(noMode.code).toBe(2);
    expect(noMode.stderr).toContain('--mode');
    const both = await svc('ledger', 'report', '--mode', 'live', '--from', '2026-10-01', '--to', '2026-11-01', '--csv', '--json');
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('give --csv or --json, not both');
    const backwards = await svc('ledger', 'report', '--mode', 'live', '--from', '2026-11-01', '--to', '2026-10-01', '--json');
    expect(backwards.code).toBe(1);
    expect(JSON.parse(backwards.stderr).error).toMatchObject({ code: 'validation_failed', message: expect.stringContaining('Invalid field "from": must be before "to"') });
  });

  it('is a finance command: a finance operator gets it, an operations one is refused', async () => {
    const token = async (name: string, role: string) => JSON.parse((await svc('operators', 'create', name, '--role', role, '--json')).stdout).token as string;
    const finance = await token('fiona', 'finance');
    const operations = await token('otto', 'operations');
    const url = `/admin/ledger/report?${live()}`;
    expect((await t.request('GET', url, { key: finance })).status).toBe(200);
    expect((await t.request('GET', url, { key: operations })).status).toBe(403);
  });
  // The test mode's books: a receivable, an adjusting entry on fee revenue, and events booked after a close.
  it('shows a receivable on the balance sheet, an adjusting entry and late bookings as reconciling items', async () => {
    const ledger = ledgerDriver(t);
    const creator = (await t.accountWithKey()).accountId;
    const today = new Date().toISOString().slice(0, 10);
    const [dayStart, tomorrow, dayAfter] = [0, 1, 2].map((n) => new Date(Date.parse(`${today}T00:00:00Z`) + n * DAY_MS).toISOString());
    // Today is closed: everything recorded from now on that happened today is booked at tomorrow's midnight.
    expect((await withClockAhead(2 * DAY_MS, () => svc('ledger', 'close', '--mode', 'test', '--through', today))).code).toBe(0);
    const sold: any = await ledger.sale(creator, 'test', { amount_cents: 1000 });
    await ledger.payouts('test', creator);
    await ledger.refund(creator, 'test', sold.source.purchase_id);
    await ledger.sale(creator, 'test', { amount_cents: 333 });
    const adjusted = await t.admin('POST', '/admin/ledger/adjust', { mode: 'test', debit_account: Accounts.feeRevenue, credit_account: Accounts.suspense, amount_cents: 12, reason: 'correction: fee booked twice' });
    expect(adjusted.status).toBe(201);

    const test = async (f: string, t2: string) => (await report(`mode=test&from=${f}&to=${t2}`)).body;
    const closedDay = await eventually(async () => {
      const r = await test(dayStart, tomorrow);
      return r.currencies[0]?.fee_reconciliation.creators.length === 1 && r;
    }, 15000, 'the creator ledger read');
    // Today's creator lines (fees 150 - 150 + 50) are booked tomorrow: the reconciling item says so.
    expect(closedDay.currencies[0].fee_reconciliation).toMatchObject({ creators_platform_fees_cents: 50, booked_in_another_period_cents: -50, fee_revenue_cents: 0, unexplained_cents: 0, reconciles: true });
    expect(closedDay.currencies[0].income_statement.net_income_cents).toBe(0);

    const booked = await test(tomorrow, dayAfter);
    expect(booked.ok).toBe(true);
    const usd = booked.currencies[0];
    expect(usd.fee_reconciliation).toMatchObject({ creators_platform_fees_cents: 0, booked_in_another_period_cents: 50, adjustments_cents: -12, lost_disputes_cents: 0, fee_revenue_cents: 38, unexplained_cents: 0 });
    // Paid 850, refunded 850 after it, then sold 333 (283 net): the creator owes 567, an asset.
    expect(usd.balance_sheet.assets.receivables_cents).toBe(850 - 283);
    expect(usd.balance_sheet.liabilities.suspense_cents).toBe(12);
    expect(usd.balance_sheet.balanced).toBe(true);
    const trial = (await t.admin('GET', `/admin/ledger/trial-balance?mode=test&as_of=${dayAfter}`)).body;
    expect(trial.accounts.find((a: any) => a.account === `creator:${creator}:receivable`).balance_cents).toBe(567);
    // The payout, booked tomorrow, paid the first sale.
    expect(booked.payouts).toEqual([expect.objectContaining({ account_id: creator, status: 'paid', amount_cents: 850, lines_net_cents: 850, matches: true })]);
  });
});

