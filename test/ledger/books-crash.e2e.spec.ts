import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startTestApp } from '../support/app';
import { onPostgresServer } from '../support/database';
import { recordedOfType } from '../support/events';
import { eventually } from '../support/eventually';
import { KillableWorker } from '../support/kill-mid-append';
import { ledgerDriver, storedJournal } from './support';

/** Short leases: a killed instance's projections, subscribers and Idempotency-Keys are free again within a second. */
const env = { CONSUMER_LEASE_TTL_MS: '1000' };
const DAY_MS = 86_400_000;
/** Each test starts a worker process and waits out a lease: generous on a loaded machine (a limit, never the assertion). */
const SLOW = 240_000;
const day = (daysAgo: number) => new Date(Date.now() - daysAgo * DAY_MS).toISOString().slice(0, 10);

/**
 * `svc ledger adjust` and `svc ledger close` (issue 38, section 3) in a service process
 * SIGKILLed while it appends the entry or the close (held inside the event store's append by a
 * lock on one of its tables): nothing is lost or doubled, a retry under the same
 * Idempotency-Key books once and answers what was booked, the trial balance stays balanced
 * and `verify --digests` is ok. The lock is a Postgres one and two processes cannot share
 * PGlite: this runs on the Postgres server with the events in Postgres (the adopt suite,
 * test/ledger/adopt-crash.e2e.spec.ts, is the third of these).
 */
const runs = onPostgresServer && process.env.TEST_EVENTSTORE !== 'standin';
(runs ? describe : describe.skip)('svc ledger adjust and close across kill -9', () => {
  let t: Awaited<ReturnType<typeof startTestApp>>;
  let worker: KillableWorker;
  let seller: { accountId: string; key: string };
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-books-crash-'));

  beforeAll(async () => {
    t = await startTestApp({ env });
    worker = new KillableWorker(t, dataDir, env);
    seller = await t.accountWithKey({ name: 'Seller of the crash suite' });
    await ledgerDriver(t).sale(seller.accountId, 'test', { amount_cents: 1000 });
  });
  afterAll(async () => {
    worker?.stop();
    await t.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const payable = (id: string) => `creator:${id}:payable`;
  const trial = async () => (await t.admin('GET', '/admin/ledger/trial-balance?mode=test')).body;
  const row = (tb: any, account: string) => tb.accounts.find((a: any) => a.account === account) ?? { debits_cents: 0, credits_cents: 0 };
  const adjust = (body: Record<string, unknown>, key: string) =>
    t.request('POST', '/admin/ledger/adjust', { body, headers: { authorization: 'Bearer test-admin-token', 'idempotency-key': key } });
  const close = (through: string, key: string) =>
    t.request('POST', '/admin/ledger/close', { body: { mode: 'test', through }, headers: { authorization: 'Bearer test-admin-token', 'idempotency-key': key } });

  /** What the log holds of a reason's entries, and the journal's postings of them once this instance's projection has read them. */
  async function entriesWithReason(reason: string) {
    const events = [...(await recordedOfType(t, 'ManualEntryRecorded')), ...(await recordedOfType(t, 'AdjustmentRecorded'))].filter((e) => e.data.reason === reason);
    return events.map((e) => e.data.entry_id ?? e.data.transaction_id as string);
  }

  /** Once the journal holds every entry of the log: balanced, and the hash chain recomputed from the log agrees. */
  async function expectBooksSound(): Promise<void> {
    let digests: any;
    await eventually(async () => {
      digests = (await t.admin('GET', '/admin/ledger/digests?mode=test')).body;
      return digests.ok;
    }, 15000, 'verify --digests to find the journal and the log in agreement').catch(() => undefined);
    expect(digests).toMatchObject({ ok: true, differences: [] });
    const tb = await trial();
    expect(tb.balanced).toBe(true);
  }

  /** Waits for the journal to hold `ids` (each once), and returns its postings of them. */
  async function journalOf(ids: string[]) {
    let postings: any[] = [];
    await eventually(async () => {
      postings = (await storedJournal(t)).filter((p) => ids.includes(p.reference));
      return postings.length === 2 * ids.length;
    }, 15000, 'the journal to hold the entries').catch(() => undefined);
    return postings;
  }

  for (const table of ['events', 'streams'] as const) {
    it(`books an entry between platform accounts once when the process dies in its append (${table} locked), and its retry under the same key answers it`, async () => {
      const reason = `crash: suspense cleared (${table})`;
      const body = { mode: 'test', debit_account: 'platform:suspense', credit_account: 'platform:adjustments', amount_cents: 37, reason };
      const key = `adjust-platform-${table}`;
      const before = await trial();
      await worker.killMidAppend('/admin/ledger/adjust', body, table, { 'idempotency-key': key });
      const afterKill = await entriesWithReason(reason);
      expect(afterKill.length).toBeLessThanOrEqual(1);

      // The killed request's key is free once its lease passes; the retry runs, or finds it running (409) until then.
      let retried!: Awaited<ReturnType<typeof adjust>>;
      await eventually(async () => (retried = await adjust(body, key)).status !== 409, 15000, 'the killed request’s key to be free');
      expect(retried.status).toBe(201);
      const booked = await entriesWithReason(reason);
      expect(booked).toHaveLength(1);
      expect(retried.body).toMatchObject({ object: 'manual_entry', id: booked[0], amount_cents: 37, reason, debit_account: 'platform:suspense' });
      if (afterKill.length) expect(retried.body.id).toBe(afterKill[0]);
      // Replayed from now on: the same answer, nothing booked.
      const replay = await adjust(body, key);
      expect([replay.status, replay.headers['idempotent-replayed'], replay.body.id]).toEqual([201, 'true', booked[0]]);
      expect(await entriesWithReason(reason)).toHaveLength(1);

      const postings = await journalOf(booked);
      expect(postings.map((p) => [p.account, p.debit_cents, p.credit_cents, p.kind, p.reason])).toEqual([
        ['platform:suspense', 37, 0, 'manual', reason],
        ['platform:adjustments', 0, 37, 'manual', reason],
      ]);
      await expectBooksSound();
      const after = await trial();
      expect(row(after, 'platform:suspense').debits_cents - row(before, 'platform:suspense').debits_cents).toBe(37);
    }, SLOW);
  }

  it("books a goodwill credit to a creator once when the process dies in its append, and the creator's balance shows it once", async () => {
    const reason = 'crash: goodwill credit';
    const body = { mode: 'test', debit_account: 'platform:adjustments', credit_account: payable(seller.accountId), amount_cents: 125, reason };
    const key = 'adjust-creator-1';
    const balanceBefore = (await t.request('GET', '/v1/balance_transactions?limit=200', { key: seller.key })).body.summary.balance_cents;
    await worker.killMidAppend('/admin/ledger/adjust', body, 'events', { 'idempotency-key': key });
    expect((await entriesWithReason(reason)).length).toBeLessThanOrEqual(1);

    let retried!: Awaited<ReturnType<typeof adjust>>;
    await eventually(async () => (retried = await adjust(body, key)).status !== 409, 15000, 'the killed request’s key to be free');
    expect(retried.status).toBe(201);
    const booked = await entriesWithReason(reason);
    expect(booked).toHaveLength(1);
    expect(retried.body).toMatchObject({ id: booked[0], amount_cents: 125, balance_transaction: { id: booked[0], type: 'adjustment', net_cents: 125 } });

    const lines = (await t.request('GET', '/v1/balance_transactions?type=adjustment&limit=200', { key: seller.key })).body.items;
    expect(lines.filter((l: any) => l.description === `Adjustment: ${reason}`).map((l: any) => [l.id, l.net_cents])).toEqual([[booked[0], 125]]);
    expect((await t.request('GET', '/v1/balance_transactions?limit=200', { key: seller.key })).body.summary.balance_cents).toBe(balanceBefore + 125);
    expect(await journalOf(booked)).toHaveLength(2);
    await expectBooksSound();
  }, SLOW);

  /** The period closes of the log. */
  const closes = async () => (await recordedOfType(t, 'PeriodClosed')).map((e) => e.data);

  for (const [table, daysAgo] of [['events', 2], ['streams', 1]] as const) {
    it(`closes the period once when the process dies in the close's append (${table} locked); the retry under the same key answers that close`, async () => {
      const through = day(daysAgo);
      const key = `close-${through}`;
      await worker.killMidAppend('/admin/ledger/close', { mode: 'test', through }, table, { 'idempotency-key': key });
      const afterKill = (await closes()).filter((c) => c.through === through);
      expect(afterKill.length).toBeLessThanOrEqual(1);

      let retried!: Awaited<ReturnType<typeof close>>;
      await eventually(async () => (retried = await close(through, key)).status !== 409 || retried.body.error?.code !== 'idempotency_key_in_use', 15000, 'the killed request’s key to be free');
      expect(retried.status).toBe(201);
      const closed = (await closes()).filter((c) => c.through === through);
      expect(closed).toHaveLength(1);
      expect(retried.body).toMatchObject({ object: 'period', period_id: closed[0].period_id, through, closes_at: closed[0].closes_at });
      // Replayed from now on; another close of the same period under another key is refused, nothing appended.
      const replay = await close(through, key);
      expect([replay.status, replay.headers['idempotent-replayed'], replay.body.period_id]).toEqual([201, 'true', closed[0].period_id]);
      const again = await close(through, `${key}-other`);
      expect([again.status, again.body.error.code]).toEqual([409, 'period_already_closed']);
      expect((await closes()).filter((c) => c.through === through)).toHaveLength(1);

      await eventually(async () => (await t.admin('GET', '/admin/ledger/periods?mode=test')).body.items.some((p: any) => p.period_id === closed[0].period_id), 15000, 'the periods to list the close');
      const periods = (await t.admin('GET', '/admin/ledger/periods?mode=test')).body.items.filter((p: any) => p.through === through);
      expect(periods.map((p: any) => p.period_id)).toEqual([closed[0].period_id]);
      expect(periods[0].trial_balance.currency_totals.every((c: any) => c.debits_cents === c.credits_cents)).toBe(true);
      await expectBooksSound();
    }, SLOW);
  }
});
