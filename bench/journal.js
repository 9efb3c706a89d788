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
 *    Issue 38: the default trial balance re-adds every posting (and compares the running
 *    totals with the sums): timed the same way, beside the bare GROUP BY. Goal: < 2 s.
 * 4. Issue 38, the digest chain's cost: BENCH_CHAIN_EVENTS sales (20,000) appended by a load
 *    generator in its own process (bench/journal-appends.js, 8 appenders, one event an append)
 *    to a fresh database whose service (workers on) projects the journal as they arrive: with
 *    the hash chain, and without it (the service started with `-r bench/without-chain.js`,
 *    which takes the chain out of the projection; the service has no switch). The chain is
 *    computed by the journal projection, never on the append path, so both the append rate and
 *    the rate at which the events are appended *and journaled* are compared. Goal: within 5%.
 * Order alternates by round; figures are medians of BENCH_ROUNDS (3).
 *   node bench/journal.js [--json] [--only=rebuild,balance,trial-balance,digest-chain]     (npm run build first)
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
const ROWS = ['rebuild', 'balance', 'trial-balance', 'digest-chain'];
const onlyArg = process.argv.find((a) => a.startsWith('--only='));
const only = onlyArg ? onlyArg.slice('--only='.length).split(',') : ROWS;
for (const row of only) if (!ROWS.includes(row)) throw new Error(`--only: no row "${row}"; the rows are ${ROWS.join(', ')}`);
const runs = (row) => only.includes(row);

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
        () => time(async () => {
          // The default trial balance re-adds every posting and compares the running totals with the sums: valid books answer balanced, no difference.
          const tb = await admin(service.base, 'GET', '/admin/ledger/trial-balance?mode=test');
          if (!tb.balanced || tb.totals_differ?.length) throw new Error(`the trial balance is not balanced: ${JSON.stringify(tb).slice(0, 500)}`);
        }).then((s) => now.push(s)),
        () => time(() => db.query(`SELECT account, currency, sum(debit_cents), sum(credit_cents) FROM journal_postings WHERE mode = 'test' AND recorded_at <= '2030-01-01' GROUP BY account, currency`)).then((s) => bare.push(s)),
      ];
      for (const run of i % 2 ? order.reverse() : order) await run();
    }
    const { rows } = await db.query('SELECT count(*)::int AS n FROM journal_postings');
    return { postings: rows[0].n, as_of_s: +median(asOf).toFixed(3), now_s: +median(now).toFixed(3), bare_group_by_s: +median(bare).toFixed(3), readd_ratio: +(median(bare) / median(now)).toFixed(2) };
  } finally {
    await db.end();
    await service.stop();
  }
}

/** One round of the digest-chain row on a fresh database: the appends' rate and the rate appended and journaled. */
async function timeChainRound(withChain) {
  const name = `bench_chain_${randomBytes(4).toString('hex')}`;
  const server = new Client({ connectionString: serverUrl });
  await server.connect();
  await server.query(`CREATE DATABASE ${name}`);
  const url = dbUrl(serverUrl, name);
  const previousArgs = process.env.BENCH_SERVICE_NODE_ARGS;
  if (!withChain) process.env.BENCH_SERVICE_NODE_ARGS = `${previousArgs ?? ''} -r ${path.join(__dirname, 'without-chain.js')}`;
  const service = await serveService(url, { workers: true }).finally(() => {
    if (previousArgs === undefined) delete process.env.BENCH_SERVICE_NODE_ARGS;
    else process.env.BENCH_SERVICE_NODE_ARGS = previousArgs;
  });
  const db = new Client({ connectionString: url });
  await db.connect();
  try {
    await untilProjections(service.base, settled, { intervalMs: 100 });
    const start = performance.now();
    const appended = await new Promise((resolve, reject) =>
      execFile(process.execPath, [path.join(__dirname, 'journal-appends.js'), url], { maxBuffer: 1 << 20 }, (error, stdout) => (error ? reject(error) : resolve(JSON.parse(stdout)))),
    );
    await untilProjections(service.base, settled, { intervalMs: 50 });
    const journaled = (performance.now() - start) / 1000;
    // Valid books either way: every sale journaled, balanced; with the chain, verify --digests ok over every entry; without it, no chain at all.
    const { rows } = await db.query(`SELECT (SELECT count(DISTINCT event_id) FROM journal_postings)::int AS events, (SELECT count(*) FROM journal_chain)::int AS chained`);
    if (rows[0].events !== appended.events) throw new Error(`the journal holds ${rows[0].events} of ${appended.events} events`);
    if (!(await admin(service.base, 'GET', '/admin/ledger/trial-balance?mode=test')).balanced) throw new Error('the journal does not balance');
    if (withChain) {
      const digests = await admin(service.base, 'GET', '/admin/ledger/digests?mode=test');
      if (!digests.ok || digests.chains[0]?.entries !== appended.events) throw new Error(`verify --digests: ${JSON.stringify(digests).slice(0, 500)}`);
    } else if (rows[0].chained !== 0) throw new Error(`the journal without its chain chained ${rows[0].chained} entries`);
    return { append_eps: appended.events / appended.seconds, journaled_eps: appended.events / journaled };
  } finally {
    await db.end();
    await service.stop();
    await server.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await server.end();
  }
}

/**
 * The chain's own CPU, free of the machine's noise: chainOf (SHA-256 of each entry's canonical
 * postings) over the postings of BENCH_CHAIN_EVENTS sales, in this process, microseconds an event.
 */
function chainCpu() {
  const { chainOf } = require(dist('ledger/journal-chain'));
  const count = Number(process.env.BENCH_CHAIN_EVENTS || 20_000);
  const postings = Array.from({ length: count }, (_, i) =>
    postingsOf({ id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, type: 'SaleRecorded', position: String(i).padStart(41, '0'), data: ledgerSale(Math.floor(i / 200), i % 200) }),
  ).flat();
  const runs = [];
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    chainOf(postings);
    runs.push(((performance.now() - start) * 1000) / count);
  }
  return +median(runs).toFixed(1);
}

/** The digest chain's cost: rounds alternating which variant goes first; medians and their ratios. */
async function timeChain() {
  const chain = [], none = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const withChain of round % 2 === 0 ? [true, false] : [false, true]) (withChain ? chain : none).push(await timeChainRound(withChain));
  }
  const med = (rs, f) => median(rs.map(f));
  return {
    events: Number(process.env.BENCH_CHAIN_EVENTS || 20_000),
    append_eps: { chain: Math.round(med(chain, (r) => r.append_eps)), without: Math.round(med(none, (r) => r.append_eps)) },
    journaled_eps: { chain: Math.round(med(chain, (r) => r.journaled_eps)), without: Math.round(med(none, (r) => r.journaled_eps)) },
    append_ratio: +(med(chain, (r) => r.append_eps) / med(none, (r) => r.append_eps)).toFixed(3),
    journaled_ratio: +(med(chain, (r) => r.journaled_eps) / med(none, (r) => r.journaled_eps)).toFixed(3),
    chain_cpu_us_per_event: chainCpu(),
    rounds_append_eps: { chain: chain.map((r) => Math.round(r.append_eps)), without: none.map((r) => Math.round(r.append_eps)) },
  };
}

async function main() {
  if (!runs('rebuild') && !runs('balance') && !runs('trial-balance')) {
    const digest_chain = await timeChain();
    if (process.argv.includes('--json')) return console.log(JSON.stringify({ rounds: ROUNDS, digest_chain }));
    return printChain(digest_chain);
  }
  // Rebuilds at full speed, as in a maintenance window: nothing else runs beside them here.
  process.env.REBUILD_PAUSE_PERCENT = '0';
  const name = `bench_journal_${randomBytes(4).toString('hex')}`;
  const server = new Client({ connectionString: serverUrl });
  await server.connect();
  await server.query(`CREATE DATABASE ${name}`);
  const url = dbUrl(serverUrl, name);
  try {
    await seedLedgers(url, SALES);
    // The balance row reads the long ledger with an API key of its creator; the other rows need no key (the long ledger is a creator's all the same).
    let key;
    if (runs('balance')) {
      key = await makeKey(url);
      // The key's account, as the API names it.
      const service = await serveService(url, { workers: true });
      const me = await (await fetch(`${service.base}/v1/me`, { headers: { authorization: `Bearer ${key}` } })).json();
      await service.stop();
      await seedLongLedger(url, me.id);
    } else await seedLongLedger(url, 'acct_bench_long');

    // The baseline's rows: the postings the projection makes of the same events, running balances included.
    const running = new Map();
    const postings = (await readMoneyEvents(url)).flatMap((e) => postingsOf(e)).map((p) => {
      const k = `${p.mode}|${p.account}|${p.currency}`;
      running.set(k, (running.get(k) ?? 0) + p.debit_cents - p.credit_cents);
      return { ...p, balance_after_cents: running.get(k) };
    });

    const rebuild = [], baseline = [];
    if (!runs('rebuild')) {
      // The journal built by the projection's own code path: the service catching up on the seeded log.
      const service = await serveService(url, { workers: true });
      try {
        await untilProjections(service.base, settled, { intervalMs: 200, timeoutMs: 60 * 60_000 });
      } finally {
        await service.stop();
      }
    }
    for (let round = 0; runs('rebuild') && round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ['rebuild', 'baseline'] : ['baseline', 'rebuild'];
      for (const what of order) (what === 'rebuild' ? rebuild : baseline).push(what === 'rebuild' ? await timeRebuild(url) : await timeBaseline(url, postings));
    }

    // The long ledger's balance at 200 moments spread over its history; /v1/me beside it.
    const latency = { 1: { balance: [], me: [] }, 10: { balance: [], me: [] } };
    const quiet = runs('balance') ? await serveService(url, { workers: false }) : undefined;
    if (quiet) {
    const moments = Array.from({ length: 200 }, (_, i) => new Date(START + Math.floor(((i + 0.5) / 200) * LONG) * 1000).toISOString());
    const paths = moments.map((m) => `/v1/balance?as_of=${encodeURIComponent(m)}`);
    const check = await (await fetch(`${quiet.base}${paths[100]}`, { headers: { authorization: `Bearer ${key}` } })).json();
    if (!(check.available_cents > 0)) throw new Error(`the long ledger's balance as of a moment is not positive: ${JSON.stringify(check)}`);
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
    }
    const trial = runs('trial-balance') ? await timeTrialBalances(url) : undefined;
    const digest_chain = runs('digest-chain') ? await timeChain() : undefined;

    const pick = (rs, f) => +median(rs.map(f)).toFixed(2);
    const result = {
      postings: postings.length,
      rounds: ROUNDS,
      ...(runs('rebuild') && {
      rebuild_s: +median(rebuild).toFixed(2),
      baseline_s: +median(baseline).toFixed(2),
      rebuild_ratio: +(median(baseline) / median(rebuild)).toFixed(2),
      }),
      ...(quiet && {
      balance_as_of: Object.fromEntries([1, 10].map((c) => [`c${c}`, { p50_ms: pick(latency[c].balance, (r) => r.p50), p99_ms: pick(latency[c].balance, (r) => r.p99), rps: pick(latency[c].balance, (r) => r.rps) }])),
      me_floor: Object.fromEntries([1, 10].map((c) => [`c${c}`, { p50_ms: pick(latency[c].me, (r) => r.p50), p99_ms: pick(latency[c].me, (r) => r.p99), rps: pick(latency[c].me, (r) => r.rps) }])),
      }),
      trial_balance: trial,
      digest_chain,
    };
    if (process.argv.includes('--json')) return console.log(JSON.stringify(result));
    console.log(`journal over ${result.postings} postings, median of ${ROUNDS} rounds`);
    if (runs('rebuild')) console.log(`  rebuild ${result.rebuild_s} s  batched insert of the same rows ${result.baseline_s} s  ratio ${result.rebuild_ratio}  (goal >= 0.5)`);
    for (const c of quiet ? [1, 10] : []) {
      const b = result.balance_as_of[`c${c}`];
      const m = result.me_floor[`c${c}`];
      console.log(`  GET /v1/balance?as_of= on ${LONG} entries, c=${c}: p50 ${b.p50_ms} ms  p99 ${b.p99_ms} ms  ${b.rps} req/s  (goal p99 < 10 ms)`);
      console.log(`    GET /v1/me on the same service, c=${c}: p50 ${m.p50_ms} ms  p99 ${m.p99_ms} ms  ${m.rps} req/s`);
    }
    if (trial) {
      console.log(`  trial balance over ${trial.postings} postings: as of a moment ${trial.as_of_s} s, now ${trial.now_s} s  (goal < 2 s); bare GROUP BY ${trial.bare_group_by_s} s`);
      console.log(`  trial balance re-adding every posting (the default, running totals compared): ${trial.now_s} s  (goal < 2 s); bare GROUP BY / it ${trial.readd_ratio}`);
    }
    if (digest_chain) printChain(digest_chain);
  } finally {
    await server.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await server.end();
  }
}

function printChain(c) {
  console.log(`  digest chain, ${c.events} sales appended one an append by 8 appenders while the journal projects them, median of ${ROUNDS} rounds:`);
  console.log(`    appends ${c.append_eps.chain} events/s with the chain, ${c.append_eps.without} without: ratio ${c.append_ratio}  (goal >= 0.95)`);
  console.log(`    appended and journaled ${c.journaled_eps.chain} events/s with the chain, ${c.journaled_eps.without} without: ratio ${c.journaled_ratio}  (goal >= 0.95)`);
  console.log(`    the chain's own CPU (chainOf over the same sales' postings, this process): ${c.chain_cpu_us_per_event} µs an event, against ${Math.round(1e6 / c.append_eps.without)} µs an append at the rate without it`);
  console.log(`    each round's appends/s: with the chain ${c.rounds_append_eps.chain.join(', ')}; without ${c.rounds_append_eps.without.join(', ')}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
