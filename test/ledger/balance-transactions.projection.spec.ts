import { balanceTransactionsProjection } from '../../projections/balance-transactions.projection';
import { EVENT_STORE, EventStore, START } from '../../src/event-store/event-store';
import { startTestApp, TestApp } from '../support/app';
import { ledgerDriver } from './support';

describe('balance_transactions projection', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const snapshot = async () => ({
    rows: (await t.db.query('SELECT * FROM balance_transactions ORDER BY id')).rows,
    ledgers: (await t.db.query('SELECT * FROM ledger_accounts ORDER BY account_id, mode')).rows,
  });

  it('applies a ledger event delivered twice once', async () => {
    const ledger = ledgerDriver(t);
    const { accountId } = await t.accountWithKey();
    await ledger.sale(accountId, 'test', { purchase_id: 'pur_i1' });
    await ledger.sale(accountId, 'test', { purchase_id: 'pur_i2' });
    await ledger.refund(accountId, 'test', 'pur_i1');
    await ledger.payouts('test', accountId);
    await t.admin('POST', '/admin/payouts/pause', { account: accountId, mode: 'test' });
    const before = await snapshot();
    expect(before.rows).toHaveLength(4);

    const events = await t.app.get<EventStore>(EVENT_STORE).readAll({ after: START, limit: 1000 });
    const ledgerEvents = events.filter((e) => balanceTransactionsProjection.handles.includes(e.type));
    expect(ledgerEvents).toHaveLength(6);
    await t.db.transaction(async (tx) => {
      for (const event of ledgerEvents) await balanceTransactionsProjection.apply(tx, event);
    });
    expect(await snapshot()).toEqual(before);
  });
});
