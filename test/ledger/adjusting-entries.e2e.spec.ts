import { ProjectionRunner } from '../../src/projection-runner/projection-runner';
import { startTestApp, TestApp } from '../support/app';
import { serveForCli, svc } from '../support/cli';
import { recordedOfType } from '../support/events';
import { ledgerDriver, storedJournal } from './support';

/** Issue 38, section 3: svc ledger adjust (PGlite by default; DATABASE_URL for Postgres). */
describe('adjusting entries: svc ledger adjust', () => {
  let t: TestApp;
  let ledger: ReturnType<typeof ledgerDriver>;
  let restoreEnv: () => void;
  let seller: { accountId: string; key: string };
  let other: { accountId: string; key: string };
  beforeAll(async () => {
    t = await startTestApp({ env: { PLATFORM_FEE_BPS: '1500' } });
    ledger = ledgerDriver(t);
    restoreEnv = await serveForCli(t);
    seller = await t.accountWithKey();
    other = await t.accountWithKey();
    await ledger.sale(seller.accountId, 'test', { amount_cents: 1000 });
  });
  afterAll(async () => {
    restoreEnv();
    await t.close();
  });

  const payable = (id: string) => `creator:${id}:payable`;
  const entriesRecorded = async () => (await recordedOfType(t, 'ManualEntryRecorded')).length + (await recordedOfType(t, 'AdjustmentRecorded')).length;
  const trial = async () => (await t.admin('GET', '/admin/ledger/trial-balance?mode=test')).body;
  const row = (tb: any, account: string) => tb.accounts.find((a: any) => a.account === account);

  it('books a goodwill credit to a creator: a balanced manual entry with its reason, an adjustment line, and the balance pays out', async () => {
    const res = await svc('ledger', 'adjust', '--mode', 'test', '--debit', 'platform:adjustments', '--credit', payable(seller.accountId), '--amount', '150', '--reason', 'goodwill: late delivery', '--json');
    expect([res.code, res.stderr]).toEqual([0, '']);
    const entry = JSON.parse(res.stdout);
    expect(entry).toMatchObject({
      object: 'manual_entry',
      mode: 'test',
      debit_account: 'platform:adjustments',
      credit_account: payable(seller.accountId),
      amount_cents: 150,
      currency: 'usd',
      reason: 'goodwill: late delivery',
      actor: 'admin',
      balance_transaction: { type: 'adjustment', amount_cents: 150, fee_cents: 0, net_cents: 150, status: 'pending', description: 'Adjustment: goodwill: late delivery', source: { purchase_id: null, asset: null } },
    });
    const { items, summary } = await ledger.balance(seller.key);
    expect(items.find((i) => i.id === entry.id)).toMatchObject({ id: entry.id, type: 'adjustment', net_cents: 150, reporting_category: 'adjustment', balance_after_cents: 1000 });
    expect(summary.balance_cents).toBe(1000);
    expect((await t.request('GET', '/v1/balance', { key: seller.key })).body.available_cents).toBe(1000);
    expect((await t.request('GET', '/v1/balance_transactions?type=adjustment', { key: seller.key })).body.items).toHaveLength(1);

    const postings = (await storedJournal(t)).filter((p) => p.reference === entry.id);
    expect(postings.map((p) => [p.event_type, p.account, p.debit_cents, p.credit_cents, p.kind, p.reason, p.actor])).toEqual([
      ['AdjustmentRecorded', 'platform:adjustments', 150, 0, 'manual', 'goodwill: late delivery', 'admin'],
      ['AdjustmentRecorded', payable(seller.accountId), 0, 150, 'manual', 'goodwill: late delivery', 'admin'],
    ]);
    const journal = await svc('ledger', 'journal', '--mode', 'test', '--format', 'jsonl');
    expect(journal.stdout.trim().split('\n').map((l) => JSON.parse(l)).filter((p) => p.reference === entry.id)).toEqual(postings.map((p) => expect.objectContaining({ kind: 'manual', reason: 'goodwill: late delivery' })));
    const tb = await trial();
    expect(tb.balanced).toBe(true);
    expect(row(tb, 'platform:adjustments')).toEqual({ account: 'platform:adjustments', currency: 'usd', debits_cents: 150, credits_cents: 0, balance_cents: 150 });

    // The payout pays the adjusted balance.
    const run = await t.admin('POST', '/admin/payouts/run', { mode: 'test', account: seller.accountId });
    expect(run.body.items).toEqual([expect.objectContaining({ amount_cents: 1000, status: 'paid' })]);
    const history = await t.request('GET', '/v1/balance/history?interval=day', { key: seller.key });
    expect(history.status).toBe(200);
    expect(history.body.items.reduce((s: number, i: any) => s + i.activity.adjustments_cents, 0)).toBe(150);
    expect(history.body.items.at(-1).closing_balance_cents).toBe(0);
  });

  it('books a write-off from a creator and an entry between platform accounts; verify and a rebuild agree', async () => {
    const writeOff = await t.admin('POST', '/admin/ledger/adjust', { mode: 'test', debit_account: payable(other.accountId), credit_account: 'platform:adjustments', amount_cents: 40, reason: 'write-off: chargeback fee owed' });
    expect(writeOff.status).toBe(201);
    expect(writeOff.body.balance_transaction).toMatchObject({ type: 'adjustment', net_cents: -40 });
    expect((await ledger.balance(other.key)).summary.balance_cents).toBe(-40);
    // Receivables: the creator owes 40; the trial balance shows it as an asset, the balance never below 0.
    expect((await t.request('GET', '/v1/balance', { key: other.key })).body).toMatchObject({ available_cents: 0, receivable_cents: 40 });
    const owing = await trial();
    expect(row(owing, `creator:${other.accountId}:receivable`)).toEqual({ account: `creator:${other.accountId}:receivable`, currency: 'usd', debits_cents: 40, credits_cents: 0, balance_cents: 40 });
    expect(row(owing, payable(other.accountId))).toBeUndefined();
    expect(owing.balanced).toBe(true);

    const platform = await svc('ledger', 'adjust', '--mode', 'test', '--debit', 'platform:fee_revenue', '--credit', 'platform:suspense', '--amount', '12', '--reason', 'correction');
    expect(platform.code).toBe(0);
    expect(platform.stdout.trim()).toMatch(/^booked adj_\w+ \(test\): debit platform:fee_revenue, credit platform:suspense, 12 usd: correction$/);
    const manual = (await storedJournal(t)).filter((p) => p.event_type === 'ManualEntryRecorded');
    expect(manual.map((p) => [p.account, p.debit_cents, p.credit_cents, p.kind, p.reason])).toEqual([
      ['platform:fee_revenue', 12, 0, 'manual', 'correction'],
      ['platform:suspense', 0, 12, 'manual', 'correction'],
    ]);
    expect((await trial()).balanced).toBe(true);

    // A later sale recovers the receivable first.
    await ledger.sale(other.accountId, 'test', { amount_cents: 1000 });
    expect((await t.request('GET', '/v1/balance', { key: other.key })).body).toMatchObject({ available_cents: 810, receivable_cents: 0 });
    expect(row(await trial(), payable(other.accountId))).toMatchObject({ balance_cents: 810 });

    const verified = await svc('ledger', 'verify', '--digests', '--json');
    expect([verified.code, verified.stderr]).toEqual([0, '']);
    const before = await storedJournal(t);
    const lines = (await ledger.balance(other.key)).items;
    await t.app.get(ProjectionRunner).rebuild(['journal', 'balance_transactions']);
    expect(await storedJournal(t)).toEqual(before);
    expect((await ledger.balance(other.key)).items).toEqual(lines);
  });

  it.each([
    [{ debit_account: 'platform:nope' }, 'debit_account'],
    [{ debit_account: undefined }, 'debit_account'],
    [{ credit_account: 'processor:clearing' }, 'credit_account'],
    [{ credit_account: 'creator:acc_missing:payable' }, 'credit_account'],
    [{ credit_account: 'creator:X:in_transit' }, 'credit_account'],
    [{ credit_account: 'platform:adjustments' }, 'credit_account'],
    [{ debit_account: 'OTHER' }, 'credit_account'],
    [{ amount_cents: 0 }, 'amount_cents'],
    [{ amount_cents: -5 }, 'amount_cents'],
    [{ amount_cents: 1.5 }, 'amount_cents'],
    [{ amount_cents: '12' }, 'amount_cents'],
    [{ amount_cents: undefined }, 'amount_cents'],
    [{ reason: undefined }, 'reason'],
    [{ reason: '   ' }, 'reason'],
    [{ reason: 'r'.repeat(501) }, 'reason'],
    [{ mode: 'prod' }, 'mode'],
  ])('refuses %j with 400 naming %s, and books nothing', async (change, field) => {
    const before = await entriesRecorded();
    const body: Record<string, unknown> = { mode: 'test', debit_account: 'platform:adjustments', credit_account: payable(seller.accountId), amount_cents: 10, reason: 'r', ...change };
    if (body.debit_account === 'OTHER') body.debit_account = payable(other.accountId);
    const res = await t.admin('POST', '/admin/ledger/adjust', body);
    expect([res.status, res.body.error.code]).toEqual([400, 'validation_failed']);
    expect(res.body.error.message).toContain(`"${field}"`);
    expect(await entriesRecorded()).toBe(before);
  });

  it('the CLI refuses a missing option and a non-numeric amount', async () => {
    const before = await entriesRecorded();
    expect((await svc('ledger', 'adjust', '--mode', 'test', '--debit', 'platform:adjustments', '--credit', 'platform:suspense', '--amount', '5')).code).toBe(2);
    const bad = await svc('ledger', 'adjust', '--mode', 'test', '--debit', 'platform:adjustments', '--credit', 'platform:suspense', '--amount', 'ten', '--reason', 'r');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('"amount_cents"');
    expect(await entriesRecorded()).toBe(before);
  });
});
