import { CommandBus } from '@nestjs/cqrs';
import fc from 'fast-check';
import { EVENT_STORE, EventStore } from '../../src/event-store/event-store';
import { RecordDisputeCommand, RecordDisputeOutcomeCommand } from '../../src/ledger/commands/record-dispute';
import { Accounts, journalOf } from '../../src/ledger/journal';
import { JournalAudit } from '../../src/ledger/journal-audit';
import { ApiError } from '../../src/platform/errors';
import type { Mode } from '../../src/platform/mode';
import { ProjectionRunner } from '../../src/projection-runner/projection-runner';
import { startTestApp, TestApp } from '../support/app';
import { ledgerDriver, moneyEvents, storedJournal } from './support';

type Op =
  | { kind: 'sale' | 'refund'; account: number; mode: Mode; purchase: number }
  | { kind: 'dispute'; account: number; mode: Mode; purchase: number }
  | { kind: 'close'; account: number; mode: Mode; purchase: number; outcome: 'won' | 'lost' }
  | { kind: 'payout'; mode: Mode };

const ACCOUNTS = 2;
const account = fc.integer({ min: 0, max: ACCOUNTS - 1 });
const mode = fc.constantFrom<Mode>('test', 'live');
const purchase = fc.integer({ min: 0, max: 4 });
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('sale' as const), account, mode, purchase }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('refund' as const), account, mode, purchase }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('dispute' as const), account, mode, purchase }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('close' as const), account, mode, purchase, outcome: fc.constantFrom('won' as const, 'lost' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('payout' as const), mode }) },
);
const batches = fc.array(fc.array(op, { minLength: 1, maxLength: 3 }), { minLength: 2, maxLength: 8 });

/**
 * Issue 23, on the backend this suite runs on (Postgres, PGlite, or the EventStoreDB stand-in):
 * money through the real commands, concurrently, then the journal read model checked against
 * the pure posting rules over the log. A balance as of a moment is the fold of the log up to it
 * and later appends never change it; a rebuild reproduces the journal row for row.
 */
describe('journal properties on the event store and read models', () => {
  let t: TestApp;
  let run = 0;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('keeps balances as of a moment fixed, equal to the fold of the log, and rebuilds the journal exactly', async () => {
    const ledger = ledgerDriver(t);
    const bus = t.app.get(CommandBus);
    const store = t.app.get<EventStore>(EVENT_STORE);
    const runner = t.app.get(ProjectionRunner);
    const accounts: { id: string; keys: Record<Mode, string> }[] = [];
    for (let i = 0; i < ACCOUNTS; i++) {
      const test = await t.accountWithKey({ mode: 'test', scopes: ['payouts:read'] });
      const live = await t.admin('POST', '/admin/keys', { account: test.accountId, mode: 'live', scopes: ['payouts:read'] });
      accounts.push({ id: test.accountId, keys: { test: test.key, live: live.body.key } });
    }
    const balanceAsOf = async (key: string, asOf: string) => (await t.request('GET', `/v1/balance?as_of=${encodeURIComponent(asOf)}`, { key })).body;

    await fc.assert(
      fc.asyncProperty(batches, async (plan) => {
        run++;
        const purchaseId = (o: { account: number; purchase: number }) => `pur_j${run}a${o.account}p${o.purchase}`;
        const perform = async (o: Op) => {
          try {
            if (o.kind === 'sale') await ledger.sale(accounts[o.account].id, o.mode, { purchase_id: purchaseId(o), amount_cents: 1000 + 97 * o.purchase });
            else if (o.kind === 'refund') await ledger.refund(accounts[o.account].id, o.mode, purchaseId(o));
            else if (o.kind === 'dispute') {
              await bus.execute(new RecordDisputeCommand(accounts[o.account].id, o.mode, purchaseId(o), `dp_${purchaseId(o)}`, 1000, 1500, 'fraudulent'));
            } else if (o.kind === 'close') {
              await bus.execute(new RecordDisputeOutcomeCommand(accounts[o.account].id, o.mode, purchaseId(o), `dp_${purchaseId(o)}`, o.outcome));
            } else await ledger.payouts(o.mode);
          } catch (error) {
            // What the books refuse (a refund of nothing, a dispute of a refunded sale, a second outcome) records nothing.
            if (!(error instanceof ApiError && error.status < 500)) throw error;
          }
        };
        // After each batch, once the journal has read it: every creator's balance as of now.
        const seen: { asOf: string; answers: any[] }[] = [];
        for (const batch of plan) {
          await Promise.all(batch.map(perform));
          expect(await runner.waitFor(await store.headPosition(), { projections: ['journal'], timeoutMs: 15000 })).toBe(true);
          // as_of is a cut-off, strictly before (issue 38): a moment after this batch's last stamp.
          await new Promise((r) => setTimeout(r, 2));
          const asOf = new Date().toISOString();
          const answers = [];
          for (const a of accounts) for (const m of ['test', 'live'] as Mode[]) answers.push(await balanceAsOf(a.keys[m], asOf));
          seen.push({ asOf, answers });
          // The next batch's events are stamped after this moment.
          await new Promise((r) => setTimeout(r, 2));
        }

        const derived = journalOf(await moneyEvents(t));
        const stored = await storedJournal(t);
        expect(stored.map(({ balance_after_cents, ...p }) => p)).toEqual(derived);
        for (const { asOf, answers } of seen) {
          let i = 0;
          for (const a of accounts) {
            for (const m of ['test', 'live'] as Mode[]) {
              const upTo = derived.filter((p) => p.mode === m && p.recorded_at < asOf);
              const owed = (account: string) => upTo.filter((p) => p.account === account).reduce((s, p) => s + p.credit_cents - p.debit_cents, 0);
              const payable = owed(Accounts.payable(a.id));
              // A payable below zero is what the creator owes: receivable_cents, and available never below 0.
              const fold = { available_cents: Math.max(0, payable), receivable_cents: Math.max(0, 0 - payable), in_transit_cents: owed(Accounts.inTransit(a.id)), withheld_cents: owed(Accounts.withheld(a.id)) };
              expect(answers[i]).toMatchObject(fold);
              // Asked again after every later append: the same answer.
              expect(await balanceAsOf(a.keys[m], asOf)).toEqual(answers[i]);
              i++;
            }
          }
        }
        for (const m of ['test', 'live']) expect((await t.admin('GET', `/admin/ledger/trial-balance?mode=${m}`)).body.balanced).toBe(true);
        expect((await t.app.get(JournalAudit).verify({})).ok).toBe(true);
        await runner.rebuild(['journal']);
        expect(await storedJournal(t)).toEqual(stored);
      }),
      { numRuns: 8 },
    );
  });
});
