import { balanceTransactionsProjection } from '../../projections/balance-transactions.projection';
import type { Queryable } from '../../src/database/database';
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

  it('applies a history as whole batches exactly as one event at a time, and as the live read model has it', async () => {
    const ledger = ledgerDriver(t);
    const accounts = [(await t.accountWithKey()).accountId, (await t.accountWithKey()).accountId];
    for (const [i, accountId] of accounts.entries()) {
      for (const mode of ['test', 'live'] as const) {
        await ledger.sale(accountId, mode, { purchase_id: `pur_b${i}${mode}1` });
        await ledger.sale(accountId, mode, { purchase_id: `pur_b${i}${mode}2`, amount_cents: 4321 });
        await ledger.refund(accountId, mode, `pur_b${i}${mode}1`);
        await ledger.payouts(mode, accountId);
        await ledger.sale(accountId, mode, { purchase_id: `pur_b${i}${mode}3` });
        await ledger.refund(accountId, mode, `pur_b${i}${mode}3`);
        await ledger.sale(accountId, mode, { purchase_id: `pur_b${i}${mode}4` });
      }
    }
    const events = (await t.app.get<EventStore>(EVENT_STORE).readAll({ after: START, limit: 10_000 })).filter((e) =>
      balanceTransactionsProjection.handles.includes(e.type),
    );
    const mine = (rows: any[]) => rows.filter((r) => accounts.includes(r.account_id));

    /** The projection's tables built from scratch in a schema of their own, by `apply`. */
    const build = (how: (tx: Queryable) => Promise<void>) =>
      t.db.transaction(async (tx) => {
        const schema = `scratch_${Math.random().toString(36).slice(2, 10)}`;
        await tx.exec(`CREATE SCHEMA ${schema}; SET LOCAL search_path TO ${schema}; ${balanceTransactionsProjection.schema}`);
        await how(tx);
        const result = {
          rows: mine((await tx.query('SELECT * FROM balance_transactions ORDER BY id')).rows),
          ledgers: mine((await tx.query('SELECT * FROM ledger_accounts ORDER BY account_id, mode')).rows),
        };
        await tx.exec(`SET LOCAL search_path TO public; DROP SCHEMA ${schema} CASCADE`);
        return result;
      });

    const oneByOne = await build(async (tx) => {
      for (const event of events) await balanceTransactionsProjection.apply(tx, event);
    });
    const batched = await build(async (tx) => {
      // Two batches, split inside a run of sales, the second one delivered twice.
      const half = Math.floor(events.length / 2);
      await balanceTransactionsProjection.applyBatch!(tx, events.slice(0, half));
      await balanceTransactionsProjection.applyBatch!(tx, events.slice(half));
      await balanceTransactionsProjection.applyBatch!(tx, events.slice(half));
    });
    expect(oneByOne.rows).toHaveLength(accounts.length * 2 * 7);
    expect(batched).toEqual(oneByOne);
    const live = await snapshot();
    expect({ rows: mine(live.rows), ledgers: mine(live.ledgers) }).toEqual(oneByOne);
    // And the live one is what the decider, which shares no code with the projection, computes.
    expect((await t.admin('GET', '/admin/ledger/verify')).body).toMatchObject({ ok: true, first_difference: null });
  });
});

