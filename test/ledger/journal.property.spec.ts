import fc from 'fast-check';
import { Accounts, balanceEffects, JOURNAL_EVENT_TYPES, JournalEvent, journalOf, Posting, postingsOf } from '../../src/ledger/journal';
import { decide, evolve, initialState, LedgerCommand, LedgerState } from '../../src/ledger/ledger.decider';
import type { Mode } from '../../src/platform/mode';

type Op =
  | { kind: 'sale'; account: number; mode: Mode; purchase: number; amount: number }
  | { kind: 'refund'; account: number; mode: Mode; purchase: number }
  | { kind: 'payout'; account: number; mode: Mode; then: 'settle' | 'fail' | 'stay_in_transit' }
  | { kind: 'settle' | 'fail'; account: number; mode: Mode }
  | { kind: 'activation'; mode: Mode; amount: number }
  | { kind: 'duplicate'; mode: Mode; amount: number }
  | { kind: 'duplicate_refund'; mode: Mode }
  | { kind: 'dispute'; account: number; mode: Mode; purchase: number; part: number }
  | { kind: 'close_dispute'; account: number; mode: Mode; purchase: number; outcome: 'won' | 'lost' };

const account = fc.integer({ min: 0, max: 1 });
const mode = fc.constantFrom<Mode>('test', 'live');
const amount = fc.integer({ min: 100, max: 10_000_000 });
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('sale' as const), account, mode, purchase: fc.integer({ min: 0, max: 9 }), amount }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('refund' as const), account, mode, purchase: fc.integer({ min: 0, max: 9 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('payout' as const), account, mode, then: fc.constantFrom('settle' as const, 'fail' as const, 'stay_in_transit' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom('settle' as const, 'fail' as const), account, mode }) },
  { weight: 1, arbitrary: fc.oneof(fc.record({ kind: fc.constant('activation' as const), mode, amount }), fc.record({ kind: fc.constant('duplicate' as const), mode, amount })) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('duplicate_refund' as const), mode }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('dispute' as const), account, mode, purchase: fc.integer({ min: 0, max: 9 }), part: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('close_dispute' as const), account, mode, purchase: fc.integer({ min: 0, max: 9 }), outcome: fc.constantFrom('won' as const, 'lost' as const) }),
  },
);

const FEE_BPS = 1500;
const EPOCH = new Date(0).toISOString();

/**
 * Runs the operations through the real ledger decider (and the commerce facts as fulfilment
 * records them), and returns the events as the log holds them, with the decider's balance
 * of every ledger after each event.
 */
function simulate(ops: Op[]) {
  const ledgers = new Map<string, LedgerState>();
  const openDuplicates: { mode: Mode; session: string; amount: number }[] = [];
  const log: { event: JournalEvent; balances: Map<string, number>; withheld: Map<string, number>; disputed: Map<Mode, number> }[] = [];
  let n = 0;
  const openDisputes = (s: LedgerState) => [...s.sales.values()].filter((sale) => sale.dispute && !sale.dispute.outcome).map((sale) => sale.dispute!);
  const record = (type: string, data: Record<string, unknown>) => {
    n++;
    const event = { id: `evt_${n}`, type, data, position: String(n).padStart(20, '0') };
    const disputed = new Map<Mode, number>();
    for (const [k, s] of ledgers) {
      const m = k.split(':')[0] as Mode;
      disputed.set(m, (disputed.get(m) ?? 0) + openDisputes(s).reduce((sum, d) => sum + d.amount_cents, 0));
    }
    log.push({
      event,
      balances: new Map([...ledgers].map(([k, s]) => [k, s.summary.balance_cents])),
      withheld: new Map([...ledgers].map(([k, s]) => [k, openDisputes(s).reduce((sum, d) => sum + d.withheld_cents, 0)])),
      disputed,
    });
  };
  const queue = [...ops];
  while (queue.length) {
    const o = queue.shift()!;
    if (o.kind === 'activation') {
      record('KeyActivationPaid', { session_id: `cs_${n}`, mode: o.mode, account_id: 'acct_buyer', key_id: 'key_1', amount_cents: o.amount, currency: 'usd', payment_reference: `pi_${n}`, paid_at: EPOCH });
      continue;
    }
    if (o.kind === 'duplicate') {
      const session = `cs_dup${n}`;
      openDuplicates.push({ mode: o.mode, session, amount: o.amount });
      record('DuplicatePaymentReceived', { session_id: session, mode: o.mode, amount_cents: o.amount, currency: 'usd', payment_reference: `pi_${n}`, received_at: EPOCH });
      continue;
    }
    if (o.kind === 'duplicate_refund') {
      const i = openDuplicates.findIndex((d) => d.mode === o.mode);
      if (i < 0) continue;
      const [d] = openDuplicates.splice(i, 1);
      record('DuplicatePaymentRefunded', { session_id: d.session, mode: d.mode, amount_cents: d.amount, currency: 'usd', payment_reference: 'pi', processor_refund_id: `re_${n}`, settled: true, refunded_at: EPOCH });
      continue;
    }
    const key = `${o.mode}:acct_${o.account}`;
    const state = ledgers.get(key) ?? initialState();
    const who = { account_id: `acct_${o.account}`, mode: o.mode, now: EPOCH };
    const purchaseId = 'purchase' in o ? `pur_${o.account}_${o.purchase}` : '';
    const sale = state.sales.get(purchaseId);
    const command: LedgerCommand =
      o.kind === 'dispute'
        ? {
            type: 'OpenDispute',
            ...who,
            transaction_id: `txn_${n}`,
            purchase_id: purchaseId,
            dispute_id: `dp_${purchaseId}`,
            amount_cents: sale ? Math.max(1, Math.floor(state.entries[sale.index].amount_cents * o.part)) : 1,
            dispute_fee_cents: 1500,
            reason: 'fraudulent',
          }
        : o.kind === 'close_dispute'
          ? { type: 'CloseDispute', ...who, transaction_id: `txn_${n}`, purchase_id: purchaseId, dispute_id: `dp_${purchaseId}`, outcome: o.outcome }
          : o.kind === 'sale'
        ? { type: 'RecordSale', ...who, transaction_id: `txn_${n}`, purchase_id: `pur_${o.account}_${o.purchase}`, asset: { id: 'a', slug: 'a', title: 'A' }, amount_cents: o.amount, currency: 'usd', fee_bps: FEE_BPS }
        : o.kind === 'refund'
          ? { type: 'RecordRefund', ...who, transaction_id: `txn_${n}`, purchase_id: `pur_${o.account}_${o.purchase}` }
          : o.kind === 'payout'
            ? { type: 'RunPayout', ...who, transaction_id: `txn_${n}`, payout_id: `po_${n}`, requires_destination: false }
            : o.kind === 'settle'
              ? { type: 'SettlePayout', ...who, payout_id: state.inFlight?.payout_id ?? 'po_none', transfer_id: `tr_${n}` }
              : { type: 'FailPayout', ...who, payout_id: state.inFlight?.payout_id ?? 'po_none', failure_code: 'account_closed', reason: 'closed' };
    let events;
    try {
      events = decide(command, state);
    } catch {
      continue; // refunds of unsold, refunded or disputed purchases, disputes of nothing: nothing recorded
    }
    let next = state;
    for (const e of events) {
      next = evolve(next, e);
      ledgers.set(key, next);
      // Money events only: a refused payout also pauses payouts (PayoutsPaused), which posts nothing.
      if ((JOURNAL_EVENT_TYPES as readonly string[]).includes(e.type)) record(e.type, e.data as unknown as Record<string, unknown>);
    }
    if (o.kind === 'payout' && o.then !== 'stay_in_transit') queue.unshift({ kind: o.then, account: o.account, mode: o.mode });
  }
  return { log };
}

const sumBy = (postings: Posting[], pick: (p: Posting) => number) => postings.reduce((s, p) => s + pick(p), 0);
/** Credits minus debits: what a liability (a creator's account) holds. */
const owed = (postings: Posting[], account: string) => sumBy(postings.filter((p) => p.account === account), (p) => p.credit_cents - p.debit_cents);

describe('the journal: postings of money events', () => {
  it('books the worked example of docs/ledger.md: a 2,599-cent sale at 15%, its refund and a payout', () => {
    const at = (n: number) => ({ id: `evt_${n}`, position: String(n).padStart(20, '0') });
    const time = (n: number) => new Date(Date.UTC(2026, 8, 30, 12, n)).toISOString();
    const who = { account_id: 'acct_kuka', mode: 'live' as const };
    const sale = { ...at(1), type: 'SaleRecorded', data: { ...who, purchase_id: 'pur_1', amount_cents: 2599, fee_cents: 390, net_cents: 2209, currency: 'usd', created_at: time(1) } };
    expect(postingsOf(sale).map((p) => [p.account, p.debit_cents, p.credit_cents])).toEqual([
      ['processor:clearing', 2599, 0],
      ['creator:acct_kuka:payable', 0, 2209],
      ['platform:fee_revenue', 0, 390],
    ]);
    expect(postingsOf(sale)[0]).toEqual({
      posting_id: 'evt_1:0',
      event_id: 'evt_1',
      event_type: 'SaleRecorded',
      position: '00000000000000000001',
      recorded_at: '2026-09-30T12:01:00.000Z',
      mode: 'live',
      currency: 'usd',
      account: 'processor:clearing',
      debit_cents: 2599,
      credit_cents: 0,
      reference: 'pur_1',
      processor_ref: null,
    });
    const refund = { ...at(2), type: 'RefundRecorded', data: { ...who, purchase_id: 'pur_1', amount_cents: -2599, fee_cents: -390, net_cents: -2209, currency: 'usd', created_at: time(2) } };
    expect(postingsOf(refund).map((p) => [p.account, p.debit_cents, p.credit_cents])).toEqual([
      ['creator:acct_kuka:payable', 2209, 0],
      ['platform:fee_revenue', 390, 0],
      ['processor:clearing', 0, 2599],
    ]);
    const initiated = { ...at(3), type: 'PayoutInitiated', data: { ...who, payout_id: 'po_1', amount_cents: 2209, currency: 'usd', created_at: time(3) } };
    const paid = { ...at(4), type: 'PayoutPaid', data: { ...who, payout: { id: 'po_1', amount_cents: 2209, currency: 'usd', arrival_date: time(4) }, transfer_id: 'tr_1' } };
    const journal = journalOf([sale, initiated, paid]);
    expect(journal.slice(3).map((p) => [p.account, p.debit_cents, p.credit_cents, p.processor_ref])).toEqual([
      ['creator:acct_kuka:payable', 2209, 0, null],
      ['creator:acct_kuka:in_transit', 0, 2209, null],
      ['creator:acct_kuka:in_transit', 2209, 0, 'tr_1'],
      ['processor:clearing', 0, 2209, 'tr_1'],
    ]);
    expect(owed(journal, Accounts.payable('acct_kuka'))).toBe(0);
    expect(owed(journal, Accounts.inTransit('acct_kuka'))).toBe(0);
  });

  it('posts nothing for events that move no money', () => {
    const event = { id: 'evt_1', type: 'PayoutsPaused', data: { account_id: 'a', mode: 'test', paused_at: new Date().toISOString() }, position: '1' };
    expect(postingsOf(event)).toEqual([]);
  });

  it('posts a failure or a duplicate refund recorded before they carried amounts with the amount the journal shows open', () => {
    const at = (n: number) => ({ id: `evt_${n}`, position: String(n).padStart(20, '0') });
    const who = { account_id: 'acct_a', mode: 'test' as const };
    const journal = journalOf([
      { ...at(1), type: 'PayoutInitiated', data: { ...who, payout_id: 'po_1', amount_cents: 700, currency: 'usd', created_at: EPOCH } },
      { ...at(2), type: 'PayoutFailed', data: { ...who, payout_id: 'po_1', reason: 'refused', failed_at: EPOCH } },
      { ...at(3), type: 'DuplicatePaymentReceived', data: { mode: 'test', session_id: 'cs_1', amount_cents: 900, currency: 'usd', payment_reference: 'pi_1', received_at: EPOCH } },
      { ...at(4), type: 'DuplicatePaymentRefunded', data: { mode: 'test', session_id: 'cs_1', payment_reference: 'pi_1', processor_refund_id: 're_1', settled: true, refunded_at: EPOCH } },
      // A payout from before payouts had two steps: paid straight from the payable balance.
      { ...at(5), type: 'PayoutPaid', data: { ...who, payout: { id: 'po_old', amount_cents: 300, currency: 'usd', arrival_date: EPOCH } } },
    ]);
    expect(journal.slice(2).map((p) => [p.account, p.debit_cents, p.credit_cents])).toEqual([
      ['creator:acct_a:in_transit', 700, 0],
      ['creator:acct_a:payable', 0, 700],
      ['processor:clearing', 900, 0],
      ['platform:suspense', 0, 900],
      ['platform:suspense', 900, 0],
      ['processor:clearing', 0, 900],
      ['creator:acct_a:payable', 300, 0],
      ['processor:clearing', 0, 300],
    ]);
    // Nothing open to read the amount from: the event cannot be posted, and says why.
    expect(() => postingsOf({ ...at(9), type: 'PayoutFailed', data: { ...who, payout_id: 'po_9', reason: 'x', failed_at: EPOCH } }, null)).toThrow(/PayoutFailed evt_9 carries no amount/);
  });

  it('balances every event per currency, never crosses modes, and keeps each creator account equal to the decider', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 10, maxLength: 100 }), (ops) => {
        const { log } = simulate(ops);
        const journal: Posting[] = [];
        const opened = journalOf(log.map((l) => l.event));
        for (const { event, balances, withheld, disputed } of log) {
          const postings = opened.filter((p) => p.event_id === event.id);
          expect(postings.length).toBeGreaterThan(0);
          expect(sumBy(postings, (p) => p.debit_cents)).toBe(sumBy(postings, (p) => p.credit_cents));
          expect(new Set(postings.map((p) => `${p.mode}|${p.currency}`))).toEqual(new Set([`${event.data.mode}|usd`]));
          for (const p of postings) expect(Math.min(p.debit_cents, p.credit_cents)).toBe(0);
          journal.push(...postings);
          if (event.type === 'SaleRecorded') {
            // fee + net = amount, and the clearing debit is what the buyer paid.
            const d = event.data;
            expect(d.fee_cents + d.net_cents).toBe(d.amount_cents);
            expect(postings.find((p) => p.account === Accounts.clearing)?.debit_cents).toBe(d.amount_cents);
          }
          if (event.type === 'RefundRecorded') {
            const sale = log.find((l) => l.event.type === 'SaleRecorded' && l.event.data.purchase_id === event.data.purchase_id && l.event.data.mode === event.data.mode)!.event;
            const mirrored = (ps: Posting[]) => ps.map((p) => [p.account, p.credit_cents, p.debit_cents]).sort();
            expect(postings.map((p) => [p.account, p.debit_cents, p.credit_cents]).sort()).toEqual(mirrored(opened.filter((p) => p.event_id === sale.id)));
          }
          if (event.type === 'PayoutPaid' || event.type === 'PayoutFailed') {
            expect(owed(journal.filter((p) => p.mode === event.data.mode), Accounts.inTransit(event.data.account_id))).toBe(0);
          }
          if (event.type === 'DisputeOpened') {
            // fee + withheld = the disputed amount; the processor took it and its dispute fee from clearing.
            const d = event.data;
            expect(d.fee_cents + d.withheld_cents).toBe(d.amount_cents);
            expect(postings.find((p) => p.account === Accounts.clearing)?.credit_cents).toBe(d.amount_cents + d.dispute_fee_cents);
          }
          // payable + in transit is the balance of the creator's balance transactions (a payout leaves them when paid).
          for (const [key, balance] of balances) {
            const accountId = key.split(':')[1];
            const m = key.split(':')[0];
            const mine = journal.filter((p) => p.mode === m);
            expect(owed(mine, Accounts.payable(accountId)) + owed(mine, Accounts.inTransit(accountId))).toBe(balance);
            // withheld holds the open disputes' net, and returns to 0 once every dispute is closed.
            expect(owed(mine, Accounts.withheld(accountId))).toBe(withheld.get(key));
          }
          for (const [m, amount] of disputed) {
            expect(0 - owed(journal.filter((p) => p.mode === m), Accounts.disputes)).toBe(amount);
          }
        }
        // The balance history's categories (balanceEffects, kept per day as balance_days) add up to
        // each creator's balance, so closing = opening + activity holds for any run of events.
        const activity = new Map<string, number>();
        for (const { event } of log) {
          for (const e of balanceEffects(opened.filter((p) => p.event_id === event.id))) {
            const key = `${e.posting.mode}:${e.accountId}`;
            const a = e.activity;
            activity.set(key, (activity.get(key) ?? 0) + a.sales_cents + a.fees_cents + a.refunds_cents + a.payouts_cents + a.disputes_cents);
          }
        }
        // A run whose every operation was refused (nothing sold to refund, dispute or pay out) logs nothing.
        const last = log.at(-1)?.balances ?? new Map<string, number>();
        for (const [key, balance] of last) expect([key, activity.get(key) ?? 0]).toEqual([key, balance]);
        // Later events never change earlier postings: the journal of a prefix is a prefix of the journal.
        const prefix = journalOf(log.slice(0, Math.floor(log.length / 2)).map((l) => l.event));
        expect(opened.slice(0, prefix.length)).toEqual(prefix);
      }),
      { numRuns: 200 },
    );
  });
});
