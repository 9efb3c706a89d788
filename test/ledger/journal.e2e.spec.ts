import { publishModel } from '../catalog/catalog-client';
import { buy, openCheckout, payOnPage, PAST_EXPIRY_MS, PAYS, withClockAhead } from '../commerce/commerce-client';
import { Accounts, journalOf, Posting } from '../../src/ledger/journal';
import { ProjectionRunner } from '../../src/projection-runner/projection-runner';
import { LedgerStreams } from '../../src/ledger/ledger-streams';
import { JournalQueries } from '../../src/ledger/journal-queries';
import { startTestApp, TestApp } from '../support/app';
import { stallProjections } from '../support/stalled-projections';
import { serveForCli, svc } from '../support/cli';
import { moneyEvents, storedJournal } from './support';
import { eventually } from '../support/eventually';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the journal: GET /v1/balance, svc ledger trial-balance and journal', () => {
  let t: TestApp;
  let restoreEnv: () => void;
  let seller: { accountId: string; key: string };
  let buyer: { accountId: string; key: string };
  beforeAll(async () => {
    t = await startTestApp({ env: { PLATFORM_FEE_BPS: '1500' } });
    restoreEnv = await serveForCli(t);
    seller = await t.accountWithKey({ name: 'Kuka Lab' });
    buyer = await t.accountWithKey();
  });
  afterAll(async () => {
    restoreEnv();
    await t.close();
  });

  const balance = async (key: string, asOf?: string) => {
    const res = await t.request('GET', `/v1/balance${asOf ? `?as_of=${encodeURIComponent(asOf)}` : ''}`, { key });
    expect(res.status).toBe(200);
    return res.body;
  };

  it('books a checkout, a payout and a duplicate payment, and answers the balance as it stood at any moment', async () => {
    const before = new Date().toISOString();
    await pause(5);
    const model = await publishModel(t, seller.key, { title: 'Grasp Net', price_cents: 2599 });
    await buy(t, buyer.key, model.slug);
    const sold = await eventually(async () => {
      const b = await balance(seller.key);
      return b.available_cents === 2209 && b;
    }, 15000, 'the sale in the journal');
    expect(sold).toEqual({ object: 'balance', currency: 'usd', available_cents: 2209, receivable_cents: 0, in_transit_cents: 0, withheld_cents: 0, as_of: expect.any(String), payouts_paused: false, payouts_pause: null });
    await pause(5);
    const afterSale = new Date().toISOString();
    await pause(5);

    const run = await t.admin('POST', '/admin/payouts/run', { mode: 'test', account: seller.accountId });
    expect(run.body.items).toEqual([expect.objectContaining({ amount_cents: 2209, status: 'paid' })]);
    expect(await balance(seller.key)).toMatchObject({ available_cents: 0, in_transit_cents: 0 });
    // As of an earlier moment the books are as they stood then: a later payout changes nothing.
    expect(await balance(seller.key, afterSale)).toEqual({ object: 'balance', currency: 'usd', available_cents: 2209, receivable_cents: 0, in_transit_cents: 0, withheld_cents: 0, as_of: afterSale });
    expect(await balance(seller.key, before)).toMatchObject({ available_cents: 0, in_transit_cents: 0, as_of: before });
    // The buyer has no creator balance, and the other mode's books are apart.
    expect(await balance(buyer.key)).toMatchObject({ available_cents: 0 });
    const live = await t.admin('POST', '/admin/keys', { account: seller.accountId, mode: 'live', scopes: ['payouts:read'] });
    expect(await balance(live.body.key)).toMatchObject({ available_cents: 0, in_transit_cents: 0 });

    // A duplicate payment goes into suspense and out again with its automatic refund.
    const other = await publishModel(t, seller.key, { title: 'Paid Twice', price_cents: 1900 });
    const first = await openCheckout(t, buyer.key, { asset: other.id });
    const second = await withClockAhead(PAST_EXPIRY_MS, () => openCheckout(t, buyer.key, { asset: other.id }));
    await Promise.all([payOnPage(t, first.body.checkout_url, PAYS), payOnPage(t, second.body.checkout_url, PAYS)]);

    const trial = await eventually(async () => {
      const res = await t.admin('GET', '/admin/ledger/trial-balance?mode=test');
      const suspense = res.body.accounts.find((a: any) => a.account === Accounts.suspense);
      return suspense?.debits_cents === 1900 && res.body;
    }, 15000, 'the duplicate refund in the journal');
    const row = (account: string) => trial.accounts.find((a: any) => a.account === account);
    expect(trial).toMatchObject({ mode: 'test', balanced: true, unbalanced_events: [], currency_totals: [expect.objectContaining({ currency: 'usd' })] });
    expect(trial.currency_totals[0].debits_cents).toBe(trial.currency_totals[0].credits_cents);
    expect(row(Accounts.suspense)).toEqual({ account: 'platform:suspense', currency: 'usd', debits_cents: 1900, credits_cents: 1900, balance_cents: 0 });
    expect(row(Accounts.inTransit(seller.accountId))).toMatchObject({ debits_cents: 2209, credits_cents: 2209, balance_cents: 0 });
    // The processor charged its fee (2.9% + 30) on every payment, the duplicate's too, and kept it.
    const fees = [105, 85, 85];
    expect(row(Accounts.processorFees)).toEqual({ account: 'platform:processor_fees', currency: 'usd', debits_cents: 275, credits_cents: 0, balance_cents: fees.reduce((a, b) => a + b) });
    // Clearing holds what the processor keeps for us: our fees on both sales less its fees, nothing of the duplicate.
    expect(row(Accounts.clearing)).toMatchObject({ balance_cents: 2599 + 1900 + 1900 - 2209 - 1900 - 275 });
    expect(row(Accounts.feeRevenue)).toMatchObject({ balance_cents: 390 + 285 });
    expect(row(Accounts.payable(seller.accountId))).toMatchObject({ balance_cents: 1615 });
  });

  it('stores exactly the postings the pure journal derives from the log, and a rebuild reproduces them byte for byte', async () => {
    const seller2 = await t.accountWithKey();
    const model = await publishModel(t, seller2.key, { title: 'Lidar Set', price_cents: 1000 });
    await buy(t, buyer.key, model.slug);
    await eventually(async () => (await balance(seller2.key)).available_cents === 850, 15000, 'the sale');
    await t.admin('POST', '/admin/payouts/run', { mode: 'test' });

    const stored = await storedJournal(t);
    const derived: Posting[] = journalOf(await moneyEvents(t));
    expect(stored.map(({ balance_after_cents, ...p }) => p)).toEqual(derived);
    // Each posting's balance_after is its account's running balance in log order.
    const running = new Map<string, number>();
    for (const p of stored) {
      const key = `${p.mode}|${p.account}|${p.currency}`;
      running.set(key, (running.get(key) ?? 0) + p.debit_cents - p.credit_cents);
      expect([p.posting_id, p.balance_after_cents]).toEqual([p.posting_id, running.get(key)]);
    }
    // GET /v1/balance?as_of= at every moment a posting was recorded is the fold of the log up to it.
    for (const p of stored.filter((x) => x.account === Accounts.payable(seller2.accountId))) {
      // as_of is a cut-off: what was recorded strictly before it (issue 38).
      const upTo = derived.filter((d) => d.recorded_at < p.recorded_at && d.mode === 'test');
      const owed = (account: string) => upTo.filter((d) => d.account === account).reduce((s, d) => s + d.credit_cents - d.debit_cents, 0);
      expect(await balance(seller2.key, p.recorded_at)).toMatchObject({
        available_cents: owed(Accounts.payable(seller2.accountId)),
        in_transit_cents: owed(Accounts.inTransit(seller2.accountId)),
      });
    }

    // Each account's totals per UTC day (the console's revenue chart) are the sums of its postings of that day.
    const perDay = new Map<string, { debits_cents: number; credits_cents: number }>();
    for (const p of derived.filter((d) => d.mode === 'test')) {
      const key = `${p.recorded_at.slice(0, 10)}|${p.account}|${p.currency}`;
      const day = perDay.get(key) ?? { debits_cents: 0, credits_cents: 0 };
      perDay.set(key, { debits_cents: day.debits_cents + p.debit_cents, credits_cents: day.credits_cents + p.credit_cents });
    }
    const today = Date.parse(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`);
    const accounts = [...new Set(derived.map((d) => d.account))];
    const days = await t.app.get(JournalQueries).dailyTotals('test', accounts, { from: new Date(today - 2 * 86_400_000), to: new Date(today + 86_400_000) });
    expect(new Map(days.map(({ day, account, currency, ...sums }) => [`${day}|${account}|${currency}`, sums]))).toEqual(perDay);

    const tables = async () => Promise.all(['journal_accounts ORDER BY mode, account, currency', 'journal_days ORDER BY mode, account, day, currency', 'balance_days ORDER BY mode, account_id, day, currency'].map(async (q) => (await t.db.query(`SELECT * FROM ${q}`)).rows));
    const totalsBefore = await tables();
    // While journal version 1 (no per-day tables) still serves, both read the postings and answer the same.
    const history = async () => (await t.request('GET', `/v1/balance/history?from=${new Date(today - 2 * 86_400_000).toISOString()}`, { key: seller2.key })).body;
    const kept = await history();
    expect(kept.items.at(-1).activity.sales_cents).toBe(1000);
    await t.db.exec('DROP VIEW public.journal_days; DROP VIEW public.balance_days');
    expect(await t.app.get(JournalQueries).dailyTotals('test', accounts, { from: new Date(today - 2 * 86_400_000), to: new Date(today + 86_400_000) })).toEqual(days);
    expect(await history()).toEqual(kept);

    await t.app.get(ProjectionRunner).rebuild(['journal']);
    expect(await storedJournal(t)).toEqual(stored);
    expect(await tables()).toEqual(totalsBefore);
  });

  it('svc ledger trial-balance prints the accounts and exits 0 when balanced, 1 naming the event that broke it', async () => {
    const ok = await svc('ledger', 'trial-balance', '--mode', 'test', '--json');
    expect(ok.code).toBe(0);
    const report = JSON.parse(ok.stdout);
    expect(Object.keys(report)).toEqual(['mode', 'as_of', 'currency_totals', 'accounts', 'balanced', 'unbalanced_events', 'totals_differ']);
    const text = await svc('ledger', 'trial-balance', '--mode', 'test');
    expect(text.stdout).toMatch(/processor:clearing\s+usd/);
    expect(text.stdout).toMatch(/total usd: debits (\d+), credits \1 \(balanced\)/);

    // Tamper with the read model: one posting's credit no longer matches.
    const { rows } = await t.db.query(`SELECT posting_id, event_id, account FROM journal_postings WHERE mode = 'test' AND account = 'platform:fee_revenue' LIMIT 1`);
    await t.db.query('UPDATE journal_postings SET credit_cents = credit_cents + 1 WHERE posting_id = $1', [rows[0].posting_id]);
    await t.db.query(`UPDATE journal_accounts SET credits_cents = credits_cents + 1 WHERE mode = 'test' AND account = 'platform:fee_revenue'`);
    const bad = await svc('ledger', 'trial-balance', '--mode', 'test', '--json');
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toMatchObject({ balanced: false, unbalanced_events: [expect.objectContaining({ event_id: rows[0].event_id })] });
    expect(JSON.parse(bad.stderr).error).toEqual({ code: 'ledger_unbalanced', message: expect.stringContaining(`event ${rows[0].event_id}`) });
    await t.app.get(ProjectionRunner).rebuild(['journal']);
    expect((await svc('ledger', 'trial-balance', '--mode', 'test')).code).toBe(0);
  });

  // Issue 38, defect 4: without --as-of the trial balance read only the running totals, so a
  // posting changed in the database (the totals left alone) still said balanced.
  it('svc ledger trial-balance re-adds the postings: a posting changed alone, or the running totals changed alone, exits 1 naming it', async () => {
    const { rows } = await t.db.query(`SELECT posting_id, event_id, account FROM journal_postings WHERE mode = 'test' AND account = 'platform:fee_revenue' LIMIT 1`);
    await t.db.query('UPDATE journal_postings SET credit_cents = credit_cents + 1 WHERE posting_id = $1', [rows[0].posting_id]);
    const posting = await svc('ledger', 'trial-balance', '--mode', 'test', '--json');
    expect(posting.code).toBe(1);
    const report = JSON.parse(posting.stdout);
    expect(report).toMatchObject({ balanced: false, unbalanced_events: [expect.objectContaining({ event_id: rows[0].event_id })] });
    expect(report.totals_differ).toEqual([expect.objectContaining({ account: 'platform:fee_revenue', currency: 'usd' })]);
    expect(report.totals_differ[0].postings_credits_cents - report.totals_differ[0].running_credits_cents).toBe(1);
    await t.app.get(ProjectionRunner).rebuild(['journal']);
    expect((await svc('ledger', 'trial-balance', '--mode', 'test')).code).toBe(0);

    await t.db.query(`UPDATE journal_accounts SET debits_cents = debits_cents + 7, credits_cents = credits_cents + 7 WHERE mode = 'test' AND account = 'processor:clearing'`);
    const totals = await svc('ledger', 'trial-balance', '--mode', 'test', '--json');
    expect(totals.code).toBe(1);
    expect(JSON.parse(totals.stdout)).toMatchObject({ balanced: false, totals_differ: [expect.objectContaining({ account: 'processor:clearing' })] });
    expect(JSON.parse(totals.stderr).error).toEqual({ code: 'ledger_unbalanced', message: expect.stringContaining('processor:clearing') });
    await t.app.get(ProjectionRunner).rebuild(['journal']);
    expect((await svc('ledger', 'trial-balance', '--mode', 'test')).code).toBe(0);
  });

  it('svc ledger journal writes every posting as CSV or JSON lines, within a range', async () => {
    const csv = await svc('ledger', 'journal', '--mode', 'test');
    expect(csv.code).toBe(0);
    const lines = csv.stdout.trim().split('\n');
    expect(lines[0]).toBe('posting_id,event_id,event_type,position,recorded_at,mode,account,currency,debit_cents,credit_cents,reference,processor_ref,actor,reason');
    const stored = (await storedJournal(t)).filter((p) => p.mode === 'test');
    expect(lines).toHaveLength(stored.length + 1);
    const jsonl = await svc('ledger', 'journal', '--mode', 'test', '--format', 'jsonl');
    expect(jsonl.stdout.trim().split('\n').map((l) => JSON.parse(l).posting_id)).toEqual(stored.map((p) => p.posting_id));

    const from = stored[3].recorded_at;
    const ranged = await svc('ledger', 'journal', '--mode', 'test', '--from', from, '--format', 'jsonl');
    expect(ranged.stdout.trim().split('\n').map((l) => JSON.parse(l).posting_id)).toEqual(stored.filter((p) => p.recorded_at >= from).map((p) => p.posting_id));
    expect((await svc('ledger', 'journal', '--mode', 'live', '--format', 'jsonl')).stdout.trim()).toBe('');
    // Pages follow each other without a gap or a repeat.
    const page1 = await t.admin('GET', '/admin/ledger/journal?mode=test&limit=2');
    const page2 = await t.admin('GET', `/admin/ledger/journal?mode=test&limit=2&cursor=${encodeURIComponent(page1.body.next_cursor)}`);
    expect([...page1.body.items, ...page2.body.items].map((p: any) => p.posting_id)).toEqual(stored.slice(0, 4).map((p) => p.posting_id));
  });

  it.each([
    ['as_of=yesterday', 'as_of'],
    ['as_of=2026-02-30', 'as_of'],
    ['as_of=2026-09-30T25:00:00Z', 'as_of'],
    ['as_of=1727654400', 'as_of'],
  ])('answers 400 validation_failed naming the field for GET /v1/balance?%s', async (q, field) => {
    const res = await t.request('GET', `/v1/balance?${q}`, { key: seller.key });
    expect([res.status, res.body.error.code]).toEqual([400, 'validation_failed']);
    expect(res.body.error.message).toContain(`"${field}"`);
  });

  it('refuses bad input to the operator routes and the CLI, and a key without payouts:read', async () => {
    const reversed = await t.admin('GET', '/admin/ledger/journal?mode=test&from=2026-10-01&to=2026-09-01');
    expect([reversed.status, reversed.body.error.code, reversed.body.error.message]).toEqual([400, 'validation_failed', 'Invalid field "from": must not be after "to".']);
    expect((await t.admin('GET', '/admin/ledger/journal?mode=test&cursor=nope')).body.error.code).toBe('validation_failed');
    expect((await t.admin('GET', '/admin/ledger/trial-balance')).body.error.message).toContain('"mode"');
    expect((await t.admin('GET', '/admin/ledger/trial-balance?mode=test&as_of=soon')).body.error.message).toContain('"as_of"');
    expect((await svc('ledger', 'journal', '--mode', 'test', '--format', 'xlsx')).code).toBe(2);
    expect((await svc('ledger', 'trial-balance')).code).toBe(2);
    const { key } = await t.accountWithKey({ scopes: ['models:read'] });
    const refused = await t.request('GET', '/v1/balance', { key });
    expect([refused.status, refused.body.error.code]).toEqual([403, 'scope_required']);
  });

  it('answers a trial balance as of a moment from the postings recorded before it', async () => {
    const stored = (await storedJournal(t)).filter((p) => p.mode === 'test');
    const at = stored.find((p) => p.recorded_at > stored[0].recorded_at)!.recorded_at;
    const res = await t.admin('GET', `/admin/ledger/trial-balance?mode=test&as_of=${encodeURIComponent(at)}`);
    const upTo = stored.filter((p) => p.recorded_at < at);
    expect(res.body.as_of).toBe(at);
    expect(res.body.currency_totals).toEqual([{ currency: 'usd', debits_cents: upTo.reduce((s, p) => s + p.debit_cents, 0), credits_cents: upTo.reduce((s, p) => s + p.credit_cents, 0) }]);
    expect(res.body.accounts.map((a: any) => a.account).sort()).toEqual([...new Set(upTo.map((p) => p.account))].sort());
  });

  // Issue 38, defect 7: trial-balance --as-of R included a posting recorded at R while
  // journal --to R left it out, and an instant without an offset was silently taken as UTC.
  it('takes one cut-off everywhere: as_of and to both mean recorded strictly before, so the trial balance as of R is the journal up to R', async () => {
    const stored = (await storedJournal(t)).filter((p) => p.mode === 'test');
    const at = stored[3].recorded_at;
    const trial = (await t.admin('GET', `/admin/ledger/trial-balance?mode=test&as_of=${encodeURIComponent(at)}`)).body;
    const journal = (await t.admin('GET', `/admin/ledger/journal?mode=test&to=${encodeURIComponent(at)}&limit=5000`)).body.items;
    const before = stored.filter((p) => p.recorded_at < at);
    expect(journal.map((p: any) => p.posting_id)).toEqual(before.map((p) => p.posting_id));
    expect(trial.currency_totals).toEqual([{ currency: 'usd', debits_cents: before.reduce((s, p) => s + p.debit_cents, 0), credits_cents: before.reduce((s, p) => s + p.credit_cents, 0) }]);
    const creator = stored.find((p) => p.account === `creator:${seller.accountId}:payable`)!;
    const owedBefore = stored.filter((p) => p.account === creator.account && p.recorded_at < creator.recorded_at).reduce((s, p) => s + p.credit_cents - p.debit_cents, 0);
    expect((await balance(seller.key, creator.recorded_at)).available_cents).toBe(owedBefore);
  });

  it.each([
    ['/v1/balance?as_of=2026-09-30T23:59:59', 'as_of'],
    ['/v1/balance/history?to=2026-10-01T00:00', 'to'],
    ['/admin/ledger/trial-balance?mode=test&as_of=2026-09-30T23:59:59.999', 'as_of'],
    ['/admin/ledger/journal?mode=test&from=2026-09-01T00:00:00', 'from'],
    ['/admin/ledger/reconcile?mode=test&to=2026-10-01T00:00:00', 'to'],
  ])('answers 400 naming the field for an instant without an offset: %s', async (url, field) => {
    const res = url.startsWith('/v1') ? await t.request('GET', url, { key: seller.key }) : await t.admin('GET', url);
    expect([res.status, res.body.error.code]).toEqual([400, 'validation_failed']);
    expect(res.body.error.message).toContain(`"${field}"`);
    expect(res.body.error.message).toContain('offset');
  });

  describe('svc ledger verify, the journal half', () => {
    const verify = async () => {
      const res = await svc('ledger', 'verify', '--mode', 'test', '--json');
      return { code: res.code, report: JSON.parse(res.stdout), stderr: res.stderr };
    };

    it('recomputes every posting from the log and finds them all, and names a posting changed in the read model', async () => {
      const clean = await verify();
      expect(clean.code).toBe(0);
      expect(clean.report.journal).toMatchObject({ ok: true, problems: [] });
      expect(clean.report.journal.postings_checked).toBeGreaterThan(20);
      expect((await svc('ledger', 'verify')).stdout).toMatch(/^ledger verified: \d+ ledgers, \d+ transactions and \d+ journal postings match the event log\n$/);

      const { rows } = await t.db.query(`SELECT posting_id, event_id FROM journal_postings WHERE mode = 'test' AND account = 'platform:fee_revenue' LIMIT 1`);
      await t.db.query('UPDATE journal_postings SET credit_cents = credit_cents + 1 WHERE posting_id = $1', [rows[0].posting_id]);
      const bad = await verify();
      expect(bad.code).toBe(1);
      expect(bad.report.ok).toBe(false);
      expect(bad.report.journal.problems).toEqual(
        expect.arrayContaining([
          { check: 'journal_differs', message: expect.stringContaining(`posting ${rows[0].posting_id}: credit_cents is`) },
          { check: 'unbalanced_event', message: expect.stringContaining(`event ${rows[0].event_id} posts debits and credits that differ by -1 usd`) },
        ]),
      );
      expect(JSON.parse(bad.stderr).error.code).toBe('journal_mismatch');
      await t.app.get(ProjectionRunner).rebuild(['journal']);
      expect((await verify()).code).toBe(0);
    });

    it('reports a payment whose sale is missing a minute on, and is whole again once fulfilment catches up', async () => {
      const model = await publishModel(t, seller.key, { title: 'Unfulfilled', price_cents: 1500 });
      const stalled = await stallProjections(t);
      let session: { id: string };
      try {
        session = await buy(t, buyer.key, model.slug);
        const late = await withClockAhead(2 * 60_000, verify);
        expect(late.code).toBe(1);
        expect(late.report.journal.problems).toEqual([{ check: 'sale_missing', message: expect.stringMatching(/^purchase pur_\w+ \(test\) was paid at .* but no sale is recorded for it$/) }]);
        // Within the minute a subscriber takes to record it, a missing sale is not a problem yet.
        expect((await verify()).report.journal.problems).toEqual([]);
      } finally {
        await stalled.resume();
      }
      // Fulfilment records the sale once it runs again.
      await eventually(async () => (await withClockAhead(2 * 60_000, verify)).code === 0, 15000, 'the sale to be recorded');
      expect(session!.id).toMatch(/^cs_test_/);
    });

    it('reports a payout in transit longer than PAYOUT_IN_TRANSIT_MAX', async () => {
      const creator = await t.accountWithKey();
      const model = await publishModel(t, creator.key, { title: 'Slow Payout', price_cents: 1000 });
      await buy(t, buyer.key, model.slug);
      await eventually(async () => (await balance(creator.key)).available_cents === 850, 15000, 'the sale');
      // The transfer is under way and its outcome unknown: only the initiation is recorded.
      const who = { account_id: creator.accountId, mode: 'test' as const, now: new Date().toISOString() };
      const ledgers = t.app.get(LedgerStreams);
      await ledgers.handle({ type: 'RunPayout', ...who, transaction_id: 'txn_slowpayout00000000001', payout_id: 'po_slowpayout0000000000001', requires_destination: false }, () => undefined);
      expect(await balance(creator.key)).toMatchObject({ available_cents: 0, in_transit_cents: 850 });
      expect((await verify()).code).toBe(0);
      const days = await withClockAhead(3 * 24 * 3600_000 + 60_000, verify);
      expect(days.report.journal.problems).toEqual([
        { check: 'payout_in_transit_too_long', message: `account ${creator.accountId} (test): payout po_slowpayout0000000000001 of 850 has been in transit since ${who.now}` },
      ]);
      await ledgers.handle({ type: 'SettlePayout', ...who, payout_id: 'po_slowpayout0000000000001', transfer_id: 'tr_slow' }, () => undefined);
      expect((await withClockAhead(3 * 24 * 3600_000 + 60_000, verify)).code).toBe(0);
    });
  });
});
