#!/usr/bin/env node
/**
 * Rebuild throughput (issue 14): `svc projections rebuild balance_transactions` over a log of
 * BENCH_EVENTS sales (default 200,000; 1,000 ledgers of 200) against a raw batched insert of
 * the same rows into a plain table with the same columns and indexes, 2000 rows a statement
 * (the rebuild's batch size) with synchronous_commit off (as the rebuild's batches commit).
 * On the Postgres server (DATABASE_URL, default the local one), in one seeded database.
 * Each round: the service (dist/src/main.js, its own process) starts, catches up, rebuilds
 * (timed from this process over the admin API) and stops; then the baseline runs with no
 * service at all. Order alternates by round; figures are medians of BENCH_ROUNDS (3).
 *   node bench/rebuild.js [--json]     (npm run build first)
 */
const { spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { ADMIN, SALES_PER_LEDGER, admin, freePort, ledgerSale, seedLedgers, settled, untilProjections } = require('./harness');
const path = require('node:path');
const { Client } = require('pg');

const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const EVENTS = Number(process.env.BENCH_EVENTS || 200_000);
const serverUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const dist = (p) => path.join(__dirname, '../dist/src', p);

/** Starts the service on the database, waits until every projection has caught up, times one rebuild. */
async function timeRebuild(url) {
  const port = await freePort();
  const child = spawn(process.execPath, [dist('main.js')], {
    // Full speed: the rebuild alone, as in a maintenance window (a rebuild beside live traffic pauses between batches).
    env: { ...process.env, REBUILD_PAUSE_PERCENT: '0', DATABASE_URL: url, PORT: String(port), ADMIN_TOKEN: ADMIN, NODE_ENV: 'development' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    await untilProjections(base, settled, { intervalMs: 100 });
    const start = performance.now();
    // The API answers within its idle timeout; like the CLI, watch the status until the new build serves.
    const rebuilding = (status) => status.items.some((p) => p.name === 'balance_transactions' && p.rebuilding);
    const answer = await admin(base, 'POST', '/admin/projections/balance_transactions/rebuild');
    if (rebuilding(answer)) await untilProjections(base, (status) => !rebuilding(status), { intervalMs: 50 });
    const seconds = (performance.now() - start) / 1000;
    // Valid data, rebuilt right: the ledger audit replays the log and compares.
    const verified = await admin(base, 'GET', '/admin/ledger/verify');
    if (!verified.ok) throw new Error(`ledger verify failed after the rebuild: ${JSON.stringify(verified.first_difference)}`);
    return seconds;
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

/** The same rows, inserted 2000 a statement, one transaction each, into a plain copy of the tables. */
async function timeBaseline(url, events) {
  const db = new Client({ connectionString: url });
  // A failure below drops the database under this connection: the failure is what to report.
  db.on('error', () => undefined);
  await db.connect();
  const table = `raw_${randomBytes(4).toString('hex')}`;
  await db.query(`CREATE TABLE ${table} (
    id text PRIMARY KEY, account_id text NOT NULL, mode text NOT NULL, seq integer NOT NULL, type text NOT NULL,
    amount_cents bigint NOT NULL, fee_cents bigint NOT NULL, net_cents bigint NOT NULL, currency text NOT NULL,
    status text NOT NULL, created_at timestamptz NOT NULL, purchase_id text, asset_id text, asset_slug text,
    asset_title text, payout_id text, arrival_date timestamptz, description text NOT NULL, UNIQUE (account_id, mode, seq))`);
  await db.query(`CREATE INDEX ON ${table} (account_id, mode, type, seq)`);
  await db.query('SET synchronous_commit = off');
  const start = performance.now();
  const rows = [];
  for (let l = 0; l < events / SALES_PER_LEDGER; l++) for (let i = 0; i < SALES_PER_LEDGER; i++) rows.push({ seq: i, ...ledgerSale(l, i) });
  for (let from = 0; from < rows.length; from += 2000) {
    const batch = rows.slice(from, from + 2000);
    const col = (f) => batch.map(f);
    await db.query(
      `INSERT INTO ${table} (id, account_id, mode, seq, type, amount_cents, fee_cents, net_cents, currency, status, created_at,
         purchase_id, asset_id, asset_slug, asset_title, description)
       SELECT id, account_id, mode, seq, 'sale', amount_cents, fee_cents, net_cents, currency, 'pending', created_at,
              purchase_id, asset_id, asset_slug, asset_title, description
         FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::bigint[], $6::bigint[], $7::bigint[], $8::text[],
                     $9::timestamptz[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[])
           AS r(id, account_id, mode, seq, amount_cents, fee_cents, net_cents, currency, created_at, purchase_id, asset_id,
                asset_slug, asset_title, description)`,
      [col((r) => r.transaction_id), col((r) => r.account_id), col((r) => r.mode), col((r) => r.seq), col((r) => r.amount_cents),
        col((r) => r.fee_cents), col((r) => r.net_cents), col((r) => r.currency), col((r) => r.created_at), col((r) => r.purchase_id),
        col((r) => r.asset.id), col((r) => r.asset.slug), col((r) => r.asset.title), col((r) => r.description)],
    );
  }
  const seconds = (performance.now() - start) / 1000;
  await db.query(`DROP TABLE ${table}`);
  await db.end();
  return seconds;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const name = `bench_rebuild_${randomBytes(4).toString('hex')}`;
  const server = new Client({ connectionString: serverUrl });
  await server.connect();
  await server.query(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  try {
    const events = await seedLedgers(url.toString(), EVENTS);
    const times = { rebuild: [], baseline: [] };
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ['rebuild', 'baseline'] : ['baseline', 'rebuild'];
      for (const what of order) times[what].push(what === 'rebuild' ? await timeRebuild(url.toString()) : await timeBaseline(url.toString(), events));
    }
    const rebuild = events / median(times.rebuild);
    const raw = events / median(times.baseline);
    const result = { events, rounds: ROUNDS, rebuild_events_per_s: Math.round(rebuild), raw_rows_per_s: Math.round(raw), ratio: +(rebuild / raw).toFixed(2), million_events_s: +(1e6 / rebuild).toFixed(1) };
    if (process.argv.includes('--json')) return console.log(JSON.stringify(result));
    console.log(`rebuild balance_transactions over ${events} sales, median of ${ROUNDS} rounds`);
    console.log(`  rebuild ${result.rebuild_events_per_s} events/s  raw batched insert ${result.raw_rows_per_s} rows/s  ratio ${result.ratio}  (goal >= 0.5)`);
    console.log(`  1M events would take ${result.million_events_s} s  (goal < 60 s)`);
  } finally {
    await server.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await server.end();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
