#!/usr/bin/env node
/**
 * The journal (issue 23), on the Postgres server (DATABASE_URL, default the local one), in one
 * seeded database: BENCH_SALES sales (default 240,000, in ledgers of 200) plus one creator
 * with BENCH_LONG_LEDGER sales (default 100,000): about a million postings.
 *
 * 1. Rebuild: `svc projections rebuild journal` (the service in its own process, full speed)
 *    against a batched insert of the same posting rows (postingsOf over the same events) into
 *    a plain table with the journal's columns and indexes, 2000 rows a statement with
 *    synchronous_commit off. Goal: ratio >= 0.5.
 * 2. GET /v1/balance?as_of= of the creator with 100,000 entries, at moments spread over its
 *    history, by autocannon in its own process (c=1 and c=10), with the workers off; GET /v1/me on the
 *    same service, the cheapest authenticated request, measured beside it as the floor.
 *    Goal: p99 < 10 ms.
 * 3. The trial balance over every posting: as of a moment (a sum over the postings) and now
 *    (the running totals), timed from this process; the bare GROUP BY over the same table
 *    beside it. Goal: < 2 s.
 * Order alternates by round; figures are medians of BENCH_ROUNDS (3).
 *   node bench/journal.js [--json]     (npm run build first)
 */
const { execFile } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const path = require('node:path');
const { Client } = require('pg');
const { admin, dbUrl, ledgerSale, makeKey, median, seedLedgers, serveService, settled, untilProjections } = require('./harness');

const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const SALES = Number(process.env.BENCH_SALES || 240_000);
const LONG = Number(process.env.BENCH_LONG_LEDGER || 100_000);
const serverUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const dist = (p) => path.join(__dirname, '../dist/src', p);
const { postingsOf } = require(dist('ledger/journal'));
const START = Date.UTC(2026, 0, 1);

/** The key's creator gets LONG sales, one a second from START, on its own ledger stream. */
async function seedLongLedger(url, accountId) {
  const { PostgresDatabase } = require(dist('database/postgres-database'));
  const { PostgresEventStore } = require(dist('event-store/postgres/postgres-event-store'));
  const db = new PostgresDatabase(url, 2);
  const store = new PostgresEventStore(db);
  for (let from = 0; from < LONG; from += 1000) {
    const events = Array.from({ length: Math.min(1000, LONG - from) }, (_, k) => {
      const i = from + k;
      const sale = { ...ledgerSale(0, i), transaction_id: `txn_long_${i}`, purchase_id: `pur_long_${i}`, account_id: accountId };
      return { type: 'SaleRecorded', data: { ...sale, created_at: new Date(START + i * 1000).toISOString() } };
    });
    await store.append(`ledger-test-${accountId}`, events, from === 0 ? 'no_stream' : from - 1);
  }
  await store.close();
  await db.close();
}

/** Every money event of the log in order, as the projection reads them. */
async function readMoneyEvents(url) {
  const db = new Client({ connectionString: url });
  await db.connect();
  const { rows } = await db.query(
    `SELECT event_id::text AS id, type, data, lpad(transaction_id::text, 20, '0') || ':' || lpad(global_position::text, 20, '0') AS position
       FROM events WHERE type IN ('SaleRecorded', 'RefundRecorded', 'PayoutInitiated', 'PayoutPaid', 'PayoutFailed') ORDER BY global_position`,
  );
  await db.end();
  return rows;
}

async function timeRebuild(url) {
  const service = await serveService(url, { workers: true });
  try {
    await untilProjections(service.base, settled, { intervalMs: 100 });
    const start = performance.now();
    const rebuilding = (status) => status.items.some((p) => p.name === 'journal' && p.rebuilding);
    const answer = await admin(service.base, 'POST', '/admin/projections/journal/rebuild');
    if (rebuilding(answer)) await untilProjections(service.base, (status) => !rebuilding(status), { intervalMs: 50 });
    const seconds = (performance.now() - start) / 1000;
    // Valid books after the rebuild: they balance.
    const trial = await admin(service.base, 'GET', '/admin/ledger/trial-balance?mode=test');
    if (!trial.balanced) throw new Error('the rebuilt journal does not balance');
    return seconds;
  } finally {
    await service.stop();
  }
}

async function timeBaseline(url, postings) {
  const db = new Client({ connectionString: url });
  await db.connect();
  const table = `raw_${randomBytes(4).toString('hex')}`;
  await db.query(`CREATE TABLE ${table} (
    posting_id text PRIMARY KEY, event_id text NOT NULL, event_type text NOT NULL, position text NOT NULL,
    recorded_at timestamptz NOT NULL, mode text NOT NULL, currency text NOT NULL, account text NOT NULL,
    debit_cents bigint NOT NULL, credit_cents bigint NOT NULL, balance_after_cents bigint NOT NULL, reference text, processor_ref text)`);
  await db.query(`CREATE INDEX ON ${table} (mode, account, recorded_at, position)`);
  await db.query(`CREATE INDEX ON ${table} (mode, position, posting_id)`);
  await db.query(`CREATE INDEX ON ${table} (mode, reference)`);
  await db.query('SET synchronous_commit = off');
  const start = performance.now();
  for (let from = 0; from < postings.length; from += 2000) {
    const batch = postings.slice(from, from + 2000);
    const col = (f) => batch.map(f);
    await db.query(
      `INSERT INTO ${table} SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::text[],
         $8::text[], $9::bigint[], $10::bigint[], $11::bigint[], $12::text[], $13::text[])`,
      [col((p) => p.posting_id), col((p) => p.event_id), col((p) => p.event_type), col((p) => p.position), col((p) => p.recorded_at),
        col((p) => p.mode), col((p) => p.currency), col((p) => p.account), col((p) => p.debit_cents), col((p) => p.credit_cents),
        col((p) => p.balance_after_cents), col((p) => p.reference), col((p) => p.processor_ref)],
    );
  }
  const seconds = (performance.now() - start) / 1000;
  await db.query(`DROP TABLE ${table}`);
  await db.end();
  return seconds;
}

/** autocannon in its own process over a list of paths; p50 and p99 in ms. Any non-2xx fails the run. */
function load(base, paths, { key, connections, seconds }) {
  const script = `
    const autocannon = require(${JSON.stringify(require.resolve('autocannon'))});
    const paths = ${JSON.stringify(paths)};
    let n = 0;
    autocannon({ url: ${JSON.stringify(base)}, connections: ${connections}, duration: ${seconds},
      headers: { authorization: 'Bearer ${key}' },
      requests: [{ setupRequest: (r) => ({ ...r, path: paths[n++ % paths.length] }) }] },
      (err, r) => { if (err) throw err; process.stdout.write(JSON.stringify({ p50: r.latency.p50, p99: r.latency.p99, rps: r.requests.average, non2xx: r.non2xx, errors: r.errors })); });`;
  return new Promise((resolve, reject) =>
    execFile(process.execPath, ['-e', script], { maxBuffer: 64 << 20 }, (error, stdout) => {
      if (error) return reject(error);
      const r = JSON.parse(stdout);
      if (r.non2xx || r.errors) return reject(new Error(`${paths[0]}: ${r.non2xx} non-2xx and ${r.errors} errors`));
      resolve(r);
    }),
  );
}

async function timeTrialBalances(url) {
  const service = await serveService(url, { workers: false });
  const db = new Client({ connectionString: url });
  await db.connect();
  const time = async (fn) => {
    const start = performance.now();
    await fn();
    return (performance.now() - start) / 1000;
  };
  try {
    const asOf = [], now = [], bare = [];
    for (let i = 0; i < 5; i++) {
      const order = [
        () => time(() => admin(service.base, 'GET', '/admin/ledger/trial-balance?mode=test&as_of=2030-01-01T00:00:00Z')).then((s) => asOf.push(s)),
        () => time(() => admin(service.base, 'GET', '/admin/ledger/trial-balance?mode=test')).then((s) => now.push(s)),
        () => time(() => db.query(`SELECT account, currency, sum(debit_cents), sum(credit_cents) FROM journal_postings WHERE mode = 'test' AND recorded_at <= '2030-01-01' GROUP BY account, currency`)).then((s) => bare.push(s)),
      ];
      for (const run of i % 2 ? order.reverse() : order) await run();
    }
    const { rows } = await db.query('SELECT count(*)::int AS n FROM journal_postings');
    return { postings: rows[0].n, as_of_s: +median(asOf).toFixed(3), now_s: +median(now).toFixed(3), bare_group_by_s: +median(bare).toFixed(3) };
  } finally {
    await db.end();
    await service.stop();
  }
}

async function main() {
  // Rebuilds at full speed, as in a maintenance window: nothing else runs beside them here.
  process.env.REBUILD_PAUSE_PERCENT = '0';
  const name = `bench_journal_${randomBytes(4).toString('hex')}`;
  const server = new Client({ connectionString: serverUrl });
  await server.connect();
  await server.query(`CREATE DATABASE ${name}`);
  const url = dbUrl(serverUrl, name);
  try {
    await seedLedgers(url, SALES);
    const key = await makeKey(url);
    // The key's account, as the API names it.
    const service = await serveService(url, { workers: true });
    const me = await (await fetch(`${service.base}/v1/me`, { headers: { authorization: `Bearer ${key}` } })).json();
    await service.stop();
    await seedLongLedger(url, me.id);

    // The baseline's rows: the postings the projection makes of the same events, running balances included.
    const running = new Map();
    const postings = (await readMoneyEvents(url)).flatMap((e) => postingsOf(e)).map((p) => {
      const k = `${p.mode}|${p.account}|${p.currency}`;
      running.set(k, (running.get(k) ?? 0) + p.debit_cents - p.credit_cents);
      return { ...p, balance_after_cents: running.get(k) };
    });

    const rebuild = [], baseline = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ['rebuild', 'baseline'] : ['baseline', 'rebuild'];
      for (const what of order) (what === 'rebuild' ? rebuild : baseline).push(what === 'rebuild' ? await timeRebuild(url) : await timeBaseline(url, postings));
    }

    // The long ledger's balance at 200 moments spread over its history; /v1/me beside it.
    const quiet = await serveService(url, { workers: false });
    const moments = Array.from({ length: 200 }, (_, i) => new Date(START + Math.floor(((i + 0.5) / 200) * LONG) * 1000).toISOString());
    const paths = moments.map((m) => `/v1/balance?as_of=${encodeURIComponent(m)}`);
    const check = await (await fetch(`${quiet.base}${paths[100]}`, { headers: { authorization: `Bearer ${key}` } })).json();
    if (!(check.available_cents > 0)) throw new Error(`the long ledger's balance as of a moment is not positive: ${JSON.stringify(check)}`);
    const latency = { 1: { balance: [], me: [] }, 10: { balance: [], me: [] } };
    try {
      for (let round = 0; round < ROUNDS; round++) {
        for (const connections of [1, 10]) {
          const order = round % 2 === 0 ? ['balance', 'me'] : ['me', 'balance'];
          for (const what of order) {
            latency[connections][what].push(await load(quiet.base, what === 'balance' ? paths : ['/v1/me'], { key, connections, seconds: 10 }));
          }
        }
      }
    } finally {
      await quiet.stop();
    }
    const trial = await timeTrialBalances(url);

    const pick = (rs, f) => +median(rs.map(f)).toFixed(2);
    const result = {
      postings: postings.length,
      rounds: ROUNDS,
      rebuild_s: +median(rebuild).toFixed(2),
      baseline_s: +median(baseline).toFixed(2),
      rebuild_ratio: +(median(baseline) / median(rebuild)).toFixed(2),
      balance_as_of: Object.fromEntries([1, 10].map((c) => [`c${c}`, { p50_ms: pick(latency[c].balance, (r) => r.p50), p99_ms: pick(latency[c].balance, (r) => r.p99), rps: pick(latency[c].balance, (r) => r.rps) }])),
      me_floor: Object.fromEntries([1, 10].map((c) => [`c${c}`, { p50_ms: pick(latency[c].me, (r) => r.p50), p99_ms: pick(latency[c].me, (r) => r.p99), rps: pick(latency[c].me, (r) => r.rps) }])),
      trial_balance: trial,
    };
    if (process.argv.includes('--json')) return console.log(JSON.stringify(result));
    console.log(`journal over ${result.postings} postings, median of ${ROUNDS} rounds`);
    console.log(`  rebuild ${result.rebuild_s} s  batched insert of the same rows ${result.baseline_s} s  ratio ${result.rebuild_ratio}  (goal >= 0.5)`);
    for (const c of [1, 10]) {
      const b = result.balance_as_of[`c${c}`];
      const m = result.me_floor[`c${c}`];
      console.log(`  GET /v1/balance?as_of= on ${LONG} entries, c=${c}: p50 ${b.p50_ms} ms  p99 ${b.p99_ms} ms  ${b.rps} req/s  (goal p99 < 10 ms)`);
      console.log(`    GET /v1/me on the same service, c=${c}: p50 ${m.p50_ms} ms  p99 ${m.p99_ms} ms  ${m.rps} req/s`);
    }
    console.log(`  trial balance over ${trial.postings} postings: as of a moment ${trial.as_of_s} s, now ${trial.now_s} s  (goal < 2 s); bare GROUP BY ${trial.bare_group_by_s} s`);
  } finally {
    await server.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await server.end();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
