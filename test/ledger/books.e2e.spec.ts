import { withClockAhead } from '../commerce/commerce-client';
import { ProjectionRunner } from '../../src/projection-runner/projection-runner';
import { startTestApp, TestApp } from '../support/app';
import { serveForCli, svc } from '../support/cli';
import { eventually } from '../support/eventually';
import { recordedOfType } from '../support/events';
import { ledgerDriver, storedJournal } from './support';

const DAY_MS = 86_400_000;
const sorted = (tb: { accounts: any[]; currency_totals: any[] }) => ({
  accounts: [...tb.accounts].sort((a, b) => (a.account + a.currency < b.account + b.currency ? -1 : 1)),
  currency_totals: [...tb.currency_totals].sort((a, b) => (a.currency < b.currency ? -1 : 1)),
});

/** Issue 38, section 3: the journal's hash chain, and period closes (PGlite by default; DATABASE_URL for Postgres). */
describe('closing the books: svc ledger verify --digests, close and periods', () => {
  let t: TestApp;
  let ledger: ReturnType<typeof ledgerDriver>;
  let restoreEnv: () => void;
  let sellers: string[];
  beforeAll(async () => {
    t = await startTestApp({ env: { PLATFORM_FEE_BPS: '1500' } });
    ledger = ledgerDriver(t);
    restoreEnv = await serveForCli(t);
    sellers = [(await t.accountWithKey()).accountId, (await t.accountWithKey()).accountId];
    const first = await ledger.sale(sellers[0], 'test', { amount_cents: 1000 });
    await ledger.sale(sellers[1], 'test', { amount_cents: 2599 });
    await ledger.sale(sellers[0], 'test', { amount_cents: 333 });
    await ledger.refund(sellers[0], 'test', first.source.purchase_id!);
    await ledger.payouts('test');
    await ledger.sale(sellers[1], 'live', { amount_cents: 700 });
  });
  afterAll(async () => {
    restoreEnv();
    await t.close();
  });

  const chain = async () => (await t.db.query<any>(`SELECT mode, seq::int AS seq, event_id, event_type, digest FROM journal_chain ORDER BY mode, seq`)).rows;
  const rebuild = () => t.app.get(ProjectionRunner).rebuild(['journal']);

  it('chains every entry of the journal per mode, the same digests after a rebuild, and verify --digests says ok', async () => {
    const stored = await storedJournal(t);
    const before = await chain();
    // One entry per event with postings, numbered from 1 in each mode.
    const events = (mode: string) => [...new Set(stored.filter((p) => p.mode === mode).map((p) => p.event_id))];
    expect(before.filter((e) => e.mode === 'test').map((e) => e.event_id)).toEqual(events('test'));
    expect(before.filter((e) => e.mode === 'live').map((e) => e.seq)).toEqual([1]);
    expect(new Set(before.map((e) => e.digest)).size).toBe(before.length);
    expect(before.every((e) => /^[0-9a-f]{64}$/.test(e.digest))).toBe(true);

    const ok = await svc('ledger', 'verify', '--digests', '--json');
    expect([ok.code, ok.stderr]).toEqual([0, '']);
    const report = JSON.parse(ok.stdout);
    expect(report.digests).toMatchObject({ ok: true, differences: [], periods_checked: 0 });
    expect(report.digests.chains).toEqual([
      { mode: 'live', entries: 1, head: { seq: 1, digest: before.find((e) => e.mode === 'live').digest } },
      { mode: 'test', entries: events('test').length, head: { seq: events('test').length, digest: before.filter((e) => e.mode === 'test').at(-1).digest } },
    ]);
    expect((await svc('ledger', 'verify', '--digests')).stdout).toMatch(/journal digests verified: live: 1 entries.*; 0 closed periods match the log/);

    await rebuild();
    expect(await chain()).toEqual(before);
  });

  it('names the entry whose posting was changed by a cent in the database, exits 1, and a rebuild restores the same digests', async () => {
    const before = await chain();
    const { rows } = await t.db.query(`SELECT posting_id, event_id FROM journal_postings WHERE mode = 'test' AND debit_cents > 0 ORDER BY position, posting_id OFFSET 3 LIMIT 1`);
    const target = rows[0];
    const seq = before.find((e) => e.event_id === target.event_id).seq;
    await t.db.query('UPDATE journal_postings SET debit_cents = debit_cents + 1 WHERE posting_id = $1', [target.posting_id]);

    const tampered = await svc('ledger', 'verify', '--digests', '--mode', 'test', '--json');
    expect(tampered.code).toBe(1);
    const report = JSON.parse(tampered.stdout);
    expect(report.digests.ok).toBe(false);
    expect(report.digests.differences).toEqual([
      expect.objectContaining({ mode: 'test', seq, event_id: target.event_id, check: 'postings_changed', posting_id: target.posting_id }),
    ]);
    expect(report.digests.differences[0].message).toMatch(new RegExp(`^entry ${seq} \\(test\\): .*no longer hash to its digest; posting ${target.posting_id}: debit_cents is \\d+ in the journal but \\d+ from the log`));
    expect(JSON.parse(tampered.stderr).error).toEqual({ code: 'digests_differ', message: report.digests.differences[0].message });
    const human = await svc('ledger', 'verify', '--digests', '--mode', 'test');
    expect(human.code).toBe(1);
    expect(human.stdout).toContain(`postings_changed: entry ${seq} (test)`);
    // The other mode's chain is untouched.
    expect((await svc('ledger', 'verify', '--digests', '--mode', 'live')).code).toBe(0);

    await rebuild();
    expect(await chain()).toEqual(before);
    expect((await svc('ledger', 'verify', '--digests')).code).toBe(0);

    // A digest changed alone is named too.
    await t.db.query(`UPDATE journal_chain SET digest = $1 WHERE mode = 'test' AND seq = 2`, ['f'.repeat(64)]);
    const digest = JSON.parse((await svc('ledger', 'verify', '--digests', '--mode', 'test', '--json')).stdout);
    expect(digest.digests.differences).toEqual([expect.objectContaining({ seq: 2, check: 'digest_differs', stored_digest: 'f'.repeat(64), expected_digest: before.find((e) => e.mode === 'test' && e.seq === 2).digest })]);
    await rebuild();
    expect(await chain()).toEqual(before);
  });

  it('refuses a close of a period that has not ended, a bad day or mode, and appends nothing', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + DAY_MS).toISOString().slice(0, 10);
    for (const through of [today, tomorrow]) {
      const res = await t.admin('POST', '/admin/ledger/close', { mode: 'test', through });
      expect([res.status, res.body.error.code]).toEqual([400, 'period_not_ended']);
      expect(res.body.error.message).toContain(`through ${through} has not ended`);
    }
    for (const through of ['2026-02-30', 'October', '2026-10-31T00:00:00Z', 20261031]) {
      const res = await t.admin('POST', '/admin/ledger/close', { mode: 'test', through });
      expect([res.status, res.body.error.code]).toEqual([400, 'validation_failed']);
      expect(res.body.error.message).toContain('"through"');
    }
    const noMode = await t.admin('POST', '/admin/ledger/close', { through: '2026-10-31' });
    expect([noMode.status, noMode.body.error.message]).toEqual([400, expect.stringContaining('mode')]);
    const cli = await svc('ledger', 'close', '--mode', 'test');
    expect(cli.code).toBe(2);
    expect((await svc('ledger', 'close', '--mode', 'test', '--through', tomorrow)).stderr).toContain('period_not_ended');
    expect(await recordedOfType(t, 'PeriodClosed')).toEqual([]);
    expect((await t.admin('GET', '/admin/ledger/periods?mode=test')).body).toEqual({ items: [] });
    expect((await t.admin('GET', '/admin/ledger/periods')).status).toBe(400);
  });

  it('closes a period with its trial balance and digest; later events that belong to it are booked on the first open day; it answers the same after a rebuild', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const closesAt = `${new Date(Date.parse(`${today}T00:00:00Z`) + DAY_MS).toISOString()}`;
    const head = (await chain()).filter((e) => e.mode === 'test').at(-1)!;
    // Two days on, today has ended: close it.
    const closed = await withClockAhead(2 * DAY_MS, () => svc('ledger', 'close', '--mode', 'test', '--through', today, '--json'));
    expect([closed.code, closed.stderr]).toEqual([0, '']);
    const period = JSON.parse(closed.stdout);
    expect(period).toMatchObject({ object: 'period', mode: 'test', through: today, starts_at: null, closes_at: closesAt, digest: { seq: head.seq, event_id: head.event_id, digest: head.digest }, actor: 'admin' });
    const asOfClose = (await t.admin('GET', `/admin/ledger/trial-balance?mode=test&as_of=${encodeURIComponent(closesAt)}`)).body;
    expect(sorted(period.trial_balance)).toEqual(sorted(asOfClose));
    expect(period.trial_balance.accounts.length).toBeGreaterThan(3);
    const journalToClose = (await t.admin('GET', `/admin/ledger/journal?mode=test&to=${encodeURIComponent(closesAt)}&limit=5000`)).body.items;
    expect(journalToClose.length).toBe((await storedJournal(t)).filter((p) => p.mode === 'test').length);

    // Closing it again, or an earlier day, is refused, and appends nothing.
    for (const through of [today, '2026-01-31']) {
      const again = await withClockAhead(2 * DAY_MS, () => t.admin('POST', '/admin/ledger/close', { mode: 'test', through }));
      expect([again.status, again.body.error.code]).toEqual([409, 'period_already_closed']);
      expect(again.body.error.message).toContain(`closed through ${today} already`);
    }
    expect(await recordedOfType(t, 'PeriodClosed')).toHaveLength(1);
    const periods = await svc('ledger', 'periods', '--mode', 'test', '--json');
    expect(JSON.parse(periods.stdout).items).toEqual([{ ...period }]);
    expect((await svc('ledger', 'periods', '--mode', 'test')).stdout).toContain(period.period_id);
    expect(JSON.parse((await svc('ledger', 'periods', '--mode', 'live', '--json')).stdout).items).toEqual([]);

    // A sale recorded now happened today, in the closed period: booked at the first open instant, its own time kept.
    const late: any = await ledger.sale(sellers[1], 'test', { amount_cents: 1200 });
    const lateAt = new Date(late.created_at).toISOString();
    expect(lateAt < closesAt).toBe(true);
    const booked = (await storedJournal(t)).filter((p) => p.reference === late.source.purchase_id);
    expect(booked).toHaveLength(3);
    const lateSale = { id: booked[0].event_id };
    expect(booked.map((p) => [p.recorded_at, p.occurred_at])).toEqual(booked.map(() => [closesAt, lateAt]));
    const apiPosting = (await t.admin('GET', `/admin/ledger/journal?mode=test&from=${encodeURIComponent(closesAt)}`)).body.items;
    expect(apiPosting).toEqual(booked.map((p) => expect.objectContaining({ posting_id: p.posting_id, recorded_at: closesAt, occurred_at: lateAt })));
    // The creator's balance has it; the closed period does not.
    const tbAfter = (await t.admin('GET', `/admin/ledger/trial-balance?mode=test&as_of=${encodeURIComponent(closesAt)}`)).body;
    expect(sorted(tbAfter)).toEqual(sorted(asOfClose));
    expect((await t.admin('GET', `/admin/ledger/journal?mode=test&to=${encodeURIComponent(closesAt)}&limit=5000`)).body.items).toEqual(journalToClose);
    expect((await t.admin('GET', '/admin/ledger/trial-balance?mode=test')).body.balanced).toBe(true);

    // After a rebuild: the same closed period, the same late booking, the same digests.
    const chainBefore = await chain();
    await rebuild();
    expect(await chain()).toEqual(chainBefore);
    expect(sorted((await t.admin('GET', `/admin/ledger/trial-balance?mode=test&as_of=${encodeURIComponent(closesAt)}`)).body)).toEqual(sorted(asOfClose));
    expect((await t.admin('GET', `/admin/ledger/journal?mode=test&to=${encodeURIComponent(closesAt)}&limit=5000`)).body.items).toEqual(journalToClose);
    expect((await storedJournal(t)).filter((p) => p.event_id === lateSale.id).map((p) => [p.recorded_at, p.occurred_at])).toEqual(booked.map(() => [closesAt, lateAt]));
    expect(JSON.parse((await svc('ledger', 'periods', '--mode', 'test', '--json')).stdout).items).toEqual([period]);
    const verified = await svc('ledger', 'verify', '--digests', '--json');
    expect([verified.code, verified.stderr]).toEqual([0, '']);
    expect(JSON.parse(verified.stdout).digests).toMatchObject({ ok: true, periods_checked: 1 });

    // A period's recorded figures changed in the read model are named.
    await t.db.query(`UPDATE journal_periods SET trial_balance = '{"accounts":[],"currency_totals":[]}'::jsonb`);
    const changed = JSON.parse((await svc('ledger', 'verify', '--digests', '--json')).stdout);
    expect(changed.digests.differences).toEqual([expect.objectContaining({ check: 'period_differs', event_id: period.event_id })]);
    await rebuild();
    await eventually(async () => (await svc('ledger', 'verify', '--digests')).code === 0, 10000, 'the rebuilt journal verified');
  });
});
