#!/usr/bin/env node
/**
 * Append throughput (issue 14): EventStore.append through the Postgres adapter against a raw
 * single-row INSERT transaction of the same row into a plain table, 8 concurrent appenders,
 * on the Postgres server and on PGlite. Each measurement runs in its own child process on a
 * fresh database; the two alternate in order within each round; figures are medians.
 *   node bench/appends.js [--json]     (npm run build first)
 * DATABASE_URL names the server (default postgres://postgres@127.0.0.1:5432/postgres); the
 * bench creates and drops its own databases there. BENCH_ROUNDS (default 3), BENCH_SECONDS (default 4),
 * BENCH_BACKENDS (default postgres,pglite).
 */
const { spawnSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const path = require('node:path');

const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const SECONDS = Number(process.env.BENCH_SECONDS || 4);
const CONCURRENCY = 8;
const BACKENDS = (process.env.BENCH_BACKENDS || 'postgres,pglite').split(',');
const serverUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const dist = (p) => path.join(__dirname, '../dist/src', p);

const { salePayload: payload } = require('./harness');

async function openDb(backend) {
  if (backend === 'pglite') {
    const { PgliteDatabase } = require(dist('database/pglite-database'));
    return { db: await PgliteDatabase.open(), drop: async () => undefined };
  }
  const { Client } = require('pg');
  const { PostgresDatabase } = require(dist('database/postgres-database'));
  const name = `bench_appends_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  // One connection per appender, as the service's pool would give them.
  const db = new PostgresDatabase(url.toString(), CONCURRENCY);
  return {
    db,
    drop: async () => {
      await db.close();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/** Child: appends for SECONDS with CONCURRENCY appenders, prints appends/s. */
async function measure(backend, subject) {
  const { migrate } = require(dist('database/migrate'));
  const { PostgresEventStore } = require(dist('event-store/postgres/postgres-event-store'));
  const { db, drop } = await openDb(backend);
  await migrate(db);
  await db.exec('CREATE TABLE raw_events (id bigserial PRIMARY KEY, stream_id text NOT NULL, type text NOT NULL, data jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())');
  const store = new PostgresEventStore(db);
  await store.start();
  const appendOne =
    subject === 'adapter'
      ? async (worker, i, revision) => (await store.append(`bench-${worker}`, [{ type: 'SaleRecorded', data: payload(i) }], revision)).nextRevision
      : async (worker, i) => {
          await db.query('INSERT INTO raw_events (stream_id, type, data) VALUES ($1, $2, $3::jsonb)', [`bench-${worker}`, 'SaleRecorded', JSON.stringify(payload(i))]);
          return 0;
        };
  // Warm-up: connections open, plans cached.
  for (let w = 0; w < CONCURRENCY; w++) await appendOne(`warm${w}`, w, 'any');
  let count = 0;
  const until = Date.now() + SECONDS * 1000;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      let revision = 'no_stream';
      while (Date.now() < until) {
        revision = await appendOne(worker, count++, revision);
        // PGlite answers on microtasks: let timers run.
        if (backend === 'pglite') await new Promise(setImmediate);
      }
    }),
  );
  const rate = count / ((Date.now() - started) / 1000);
  await store.close();
  await drop();
  process.stdout.write(JSON.stringify({ rate }));
}

function child(backend, subject) {
  const run = spawnSync(process.execPath, [__filename, '--child', backend, subject], { encoding: 'utf8', env: process.env });
  if (run.status !== 0) throw new Error(`${backend} ${subject} failed: ${run.stderr}`);
  return JSON.parse(run.stdout).rate;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function main() {
  const results = [];
  for (const backend of BACKENDS) {
    const rates = { adapter: [], raw: [] };
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ['adapter', 'raw'] : ['raw', 'adapter'];
      for (const subject of order) rates[subject].push(child(backend, subject));
    }
    const adapter = median(rates.adapter);
    const raw = median(rates.raw);
    results.push({ backend, concurrency: CONCURRENCY, adapter_per_s: Math.round(adapter), raw_per_s: Math.round(raw), ratio: +(adapter / raw).toFixed(2) });
  }
  if (process.argv.includes('--json')) return console.log(JSON.stringify(results, null, 2));
  console.log(`appends, ${CONCURRENCY} concurrent, ${SECONDS} s, median of ${ROUNDS} rounds`);
  for (const r of results) console.log(`  ${r.backend.padEnd(9)} adapter ${r.adapter_per_s}/s  raw insert ${r.raw_per_s}/s  ratio ${r.ratio}  (goal >= 0.5)`);
}

if (process.argv[2] === '--child') {
  measure(process.argv[3], process.argv[4]).catch((error) => {
    console.error(error);
    process.exit(1);
  });
} else {
  main();
}
