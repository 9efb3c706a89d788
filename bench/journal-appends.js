#!/usr/bin/env node
/**
 * bench/journal.js's load generator for the digest-chain row, in its own process: appends
 * BENCH_CHAIN_EVENTS sales (valid SaleRecorded events, ledgers of 200) to the database at
 * argv[2] through the Postgres event store, one event an append, from 8 appenders; prints
 * {"events", "seconds"} as one JSON line.
 */
const path = require('node:path');
const { SALES_PER_LEDGER, ledgerSale } = require('./harness');

const dist = (p) => path.join(__dirname, '../dist/src', p);
const { PostgresDatabase } = require(dist('database/postgres-database'));
const { PostgresEventStore } = require(dist('event-store/postgres/postgres-event-store'));

async function main() {
  const url = process.argv[2];
  const count = Number(process.env.BENCH_CHAIN_EVENTS || 20_000);
  const db = new PostgresDatabase(url, 8);
  const store = new PostgresEventStore(db);
  const ledgers = Math.ceil(count / SALES_PER_LEDGER);
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let l = next++; l < ledgers; l = next++) {
        for (let i = 0; i < SALES_PER_LEDGER && l * SALES_PER_LEDGER + i < count; i++) {
          await store.append(`ledger-test-acct_bench_${l}`, [{ type: 'SaleRecorded', data: ledgerSale(l, i) }], i === 0 ? 'no_stream' : i - 1);
        }
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  await store.close();
  await db.close();
  process.stdout.write(`${JSON.stringify({ events: count, seconds })}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
