import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../../src/cli/main';
import { PgliteDatabase } from '../../src/database/pglite-database';
import { startTestApp } from '../support/app';
import { serveForCli, svc } from '../support/cli';
import { createTestDatabase, onPostgresServer, TestDatabase } from '../support/database';
import { EsdbStandIn } from '../support/esdb-standin';
import { eventually } from '../support/eventually';
import { ledgerDriver } from '../ledger/support';

/**
 * The move the issue asks for: a service with a populated Postgres/PGlite log, stopped;
 * `svc events copy`; the service started on EventStoreDB with a fresh read-model database
 * rebuilds its read models from $all, and the ledger audit passes with the same ledgers.
 */
describe(`moving a populated ${onPostgresServer ? 'Postgres server' : 'PGlite'} log to EventStoreDB (stand-in)`, () => {
  let database: TestDatabase;
  let standIn: EsdbStandIn;
  let dataDir: string | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
    standIn = await new EsdbStandIn().start();
  });
  afterAll(async () => {
    await database.drop();
    await standIn.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('copies, and the service on EventStoreDB rebuilds read models that pass svc ledger verify', async () => {
    // EVENTSTORE_URL '' keeps the old log in Postgres even in the CI pass on the stand-in.
    const before = await startTestApp({ shared: database, env: { EVENTSTORE_URL: '' } });
    const ledger = ledgerDriver(before);
    const accounts = [await before.accountWithKey(), await before.accountWithKey()];
    for (const [i, { accountId }] of accounts.entries()) {
      await ledger.sale(accountId, 'test', { amount_cents: 1500 + i });
      await ledger.sale(accountId, 'live', { amount_cents: 4000, purchase_id: `pur_live${i}` });
      await ledger.sale(accountId, 'test', { amount_cents: 700, purchase_id: `pur_refunded${i}` });
      await ledger.refund(accountId, 'test', `pur_refunded${i}`);
    }
    await ledger.payouts('test');
    const audited = await eventually(async () => {
      const r = await before.admin('GET', '/admin/ledger/verify');
      return r.body?.ok && r.body.ledgers_checked === 4 && r.body.journal.postings_checked === 32 && r.body;
    }, 15000, 'the ledger read model on the old log');
    const exports = await Promise.all(accounts.map(({ accountId }) => before.admin('GET', `/admin/ledger/export?account=${accountId}&mode=test`)));
    let env: NodeJS.ProcessEnv;
    if (database.url) {
      env = { DATABASE_URL: database.url };
    } else {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-events-move-'));
      const onDisk = await PgliteDatabase.open(path.join(dataDir, 'pglite'), await (database.db as PgliteDatabase).dump());
      await onDisk.close();
      env = { DATA_DIR: dataDir };
    }
    await before.close();

    let stdout = '';
    let stderr = '';
    const code = await runCli(['events', 'copy', '--to', standIn.url], (s) => (stdout += s), (s) => (stderr += s), env);
    expect([code, stderr]).toEqual([0, '']);
    expect(stdout).toMatch(/^copied \d+ events \(0 already there\); verified \d+ streams, \d+ events: counts and hashes match\n$/);

    const after = await startTestApp({ env: { EVENTSTORE_URL: standIn.url } });
    try {
      const { rows } = await after.db.query<{ n: string }>('SELECT count(*) AS n FROM events');
      expect(Number(rows[0].n)).toBe(0);
      const rebuilt = await eventually(async () => {
        const r = await after.admin('GET', '/admin/ledger/verify');
        // The audit passes at every point of the rebuild; wait until it has reached the whole log.
        return r.body?.ok && r.body.transactions_checked === audited.transactions_checked && r.body.journal.postings_checked === audited.journal.postings_checked && r.body;
      }, 30000, 'the ledger read model rebuilt from EventStoreDB');
      // Positions are the target's own ($all's), everything else the same.
      const withoutPositions = (report: any) => ({ ...report, position: undefined, journal: { ...report.journal, position: undefined } });
      expect(withoutPositions(rebuilt)).toEqual(withoutPositions(audited));
      expect(audited.journal.postings_checked).toBe(32);
      const restore = await serveForCli(after);
      try {
        expect(await svc('ledger', 'verify')).toEqual({ code: 0, stdout: 'ledger verified: 4 ledgers, 10 transactions and 32 journal postings match the event log\n', stderr: '' });
      } finally {
        restore();
      }
      for (const [i, { accountId }] of accounts.entries()) {
        const again = await after.admin('GET', `/admin/ledger/export?account=${accountId}&mode=test`);
        expect(again.body).toEqual(exports[i].body);
      }
    } finally {
      await after.close();
    }
  });
});
