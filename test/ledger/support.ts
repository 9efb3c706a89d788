import { CommandBus } from '@nestjs/cqrs';
import type { Mode } from '../../src/platform/mode';
import { RecordRefundCommand } from '../../src/ledger/commands/record-refund';
import { RecordSaleCommand, SaleInput } from '../../src/ledger/commands/record-sale';
import { RunPayoutsCommand } from '../../src/ledger/commands/run-payouts';
import type { TestApp } from '../support/app';
import { EVENT_STORE, EventStore, RecordedEvent, START } from '../../src/event-store/event-store';
import { JOURNAL_EVENT_TYPES } from '../../src/ledger/journal';

/** The ledger commands as fulfilment will call them, and the reads tests compare against. */
export function ledgerDriver(t: TestApp) {
  const bus = t.app.get(CommandBus);
  let n = 0;
  return {
    sale: (accountId: string, mode: Mode, overrides: Partial<SaleInput> = {}) =>
      bus.execute(
        new RecordSaleCommand(accountId, mode, {
          purchase_id: `pur_test${++n}`,
          asset: { id: 'asset_1', slug: 'arm-policy', title: 'Arm policy' },
          amount_cents: 1000,
          currency: 'usd',
          ...overrides,
        }),
      ),
    refund: (accountId: string, mode: Mode, purchaseId: string) => bus.execute(new RecordRefundCommand(accountId, mode, purchaseId)),
    payouts: (mode: Mode, account?: string) => bus.execute(new RunPayoutsCommand(mode, account)),
    /** The caller's whole ledger through the public API (the largest page). */
    balance: async (key: string) => {
      const res = await t.request('GET', '/v1/balance_transactions?limit=200', { key });
      if (res.status !== 200) throw new Error(`balance_transactions answered ${res.status}: ${res.text}`);
      return res.body as { items: any[]; summary: Record<string, any>; payouts_paused: boolean; has_more: boolean };
    },
  };
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const negatedSum = (values: number[]) => sum(values.map((v) => 0 - v));

/**
 * decisions section 4 on one ledger as GET /v1/balance_transactions shows it (items oldest
 * first): the summary is the sum of its lines, and each payout paid exactly the positive
 * balance before it and settled everything before it.
 */
export function expectLedgerInvariants(items: any[], s: Record<string, number>): void {
  const of = (type: string) => items.filter((i) => i.type === type);
  const [sales, refunds, paid] = [of('sale'), of('refund'), of('payout')];
  for (const r of refunds) {
    const sale = sales.find((x) => x.source.purchase_id === r.source.purchase_id);
    expect([r.amount_cents, r.fee_cents, r.net_cents]).toEqual([sale.amount_cents, sale.fee_cents, sale.net_cents].map((v: number) => 0 - v));
  }
  expect(s.gross_cents).toBe(sum(sales.map((x) => x.amount_cents)));
  expect(s.platform_fee_cents).toBe(sum(sales.map((x) => x.fee_cents)) + sum(refunds.map((x) => x.fee_cents)));
  expect(s.earned_cents).toBe(s.gross_cents - s.platform_fee_cents);
  expect(s.refunded_cents).toBe(negatedSum(refunds.map((x) => x.amount_cents)));
  expect(s.paid_out_cents).toBe(negatedSum(paid.map((x) => x.amount_cents)));
  expect(s.balance_cents).toBe(sum(items.map((x) => x.net_cents)));
  expect(s.balance_cents).toBe(s.earned_cents - s.refunded_cents - s.paid_out_cents);
  expect([s.sale_count, s.refund_count]).toEqual([sales.length, refunds.length]);

  let balance = 0;
  let lastPayout = -1;
  items.forEach((item, i) => {
    if (item.type === 'payout') {
      expect(balance).toBeGreaterThan(0);
      expect(0 - item.amount_cents).toBe(balance);
      expect(item.fee_cents).toBe(0);
      lastPayout = i;
    }
    balance += item.net_cents;
  });
  items.forEach((item, i) => expect(item.status).toBe(i <= lastPayout ? 'paid' : 'pending'));
}

/** Every money event of the log, oldest first, through the event store itself. */
export async function moneyEvents(t: TestApp): Promise<RecordedEvent[]> {
  const store = t.app.get<EventStore>(EVENT_STORE);
  const found: RecordedEvent[] = [];
  for (let after = START; ; ) {
    const batch = await store.readAll({ after, limit: 1000 });
    found.push(...batch.filter((e) => (JOURNAL_EVENT_TYPES as readonly string[]).includes(e.type)));
    if (batch.length < 1000) return found;
    after = batch[batch.length - 1].position;
  }
}

/** The journal read model as stored, in log order. */
export async function storedJournal(t: TestApp) {
  const { rows } = await t.db.query<any>('SELECT * FROM journal_postings ORDER BY position, posting_id');
  return rows.map(({ occurred_at, kind, reason, actor, ...r }) => ({ ...r, ...(occurred_at ? { occurred_at: new Date(occurred_at).toISOString() } : {}), ...(kind ? { kind, reason, actor } : {}), recorded_at: new Date(r.recorded_at).toISOString(), debit_cents: Number(r.debit_cents), credit_cents: Number(r.credit_cents), balance_after_cents: Number(r.balance_after_cents) }));
}
