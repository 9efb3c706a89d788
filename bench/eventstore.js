#!/usr/bin/env node
/**
 * The event store adapters against their own client (issue 13): appends/s and projection
 * catch-up events/s through our EventStore adapter, and through the raw client call doing
 * the same thing, on the EventStoreDB stand-in, on the Postgres server and on PGlite.
 *
 * - appends: APPENDERS (8) concurrent appenders, each appending one event at a time to its
 *   own stream with the expected revision, for BENCH_SECONDS (3) after a warm-up. Raw on the
 *   stand-in: `client.appendToStream` of @kurrent/kurrentdb-client with the same event
 *   (id, type, JSON data, empty metadata) and stream state. Raw on Postgres/PGlite: the
 *   adapter's own statement, `SELECT * FROM append_to_stream($1, $2, $3::jsonb)`, with the
 *   same payload, straight on a pg.Pool of the same size (PGlite: on the PGlite instance).
 *   (bench/appends.js compares the adapter with a bare INSERT instead.)
 * - catch-up: a log of BENCH_EVENTS (50,000) sales in 500 streams, then a reader from the
 *   start until it has caught up. Ours: `subscribeToAll(START)` with the projection runner's
 *   catch-up batch size (2000), timed until onCaughtUp. Raw on the stand-in:
 *   `client.subscribeToAll` from the start with the same stream-prefix filter until every
 *   event and its caughtUp arrived (the client's own catch-up), and, second, `client.readAll`
 *   pages of 2000 with that filter (what the adapter does, minus the adapter). Raw on
 *   Postgres/PGlite: a keyset-paged SELECT of the same columns over the events table, pages
 *   of 2000, no horizon.
 *
 * Every measurement runs in a child process of its own (the load generator); the stand-in
 * is a server process of its own too (bench/esdb-standin-server.js): one for the append
 * rounds, warmed up first, each measurement on streams of its own, and one holding the
 * catch-up log. Each Postgres append measurement gets a fresh database; PGlite ones a fresh
 * in-memory cluster loaded from a dump. The subjects' order rotates by round; figures are
 * medians of BENCH_ROUNDS (3). Beside each rate, the child's own CPU time per event while
 * timed. Each run checks its data: every stream holds exactly the appends counted,
 * revisions 0..n-1; a catch-up saw every event once, in position order, with the seeded
 * checksum.
 *
 * The stand-in is an in-memory gRPC server written for tests: its figures measure our
 * adapter's overhead against the raw client on the same server, nothing about the speed of
 * a real EventStoreDB.
 *   node bench/eventstore.js [--json] [--only standin,postgres,pglite]    (npm run build first)
 * By default the stand-in and Postgres (2.5–3.5 minutes on a loaded 2-core machine); PGlite
 * with BENCH_PGLITE=1 or --only (about 2 minutes more: each of its children loads a dump).
 * DATABASE_URL names the Postgres server (default postgres://postgres@127.0.0.1:5432/postgres);
 * the bench creates its own databases there and drops them.
 */
const { spawn, execFile } = require('node:child_process');
const { randomBytes, randomUUID } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const SECONDS = Number(process.env.BENCH_SECONDS || 3);
const WARM_UP_SECONDS = 1;
const EVENTS = Number(process.env.BENCH_EVENTS || 50_000);
const APPENDERS = 8;
const PER_STREAM = 100;
const BATCH = 2000; // the projection runner's catch-up batch (CATCH_UP_BATCH_SIZE)
const serverUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const dist = (p) => path.join(__dirname, '../dist/src', p);

const { salePayload: payload } = require('./harness');
/** What a catch-up must add up to: the sum of amount_cents over the seeded log. */
const checksum = (events) => Array.from({ length: events }, (_, i) => payload(i).amount_cents).reduce((a, b) => a + b, 0);

/** Each append measurement's own streams (the stand-in serves several measurements). */
let tag = 'x';
const streamOf = (worker) => `ledger-test-acct_bench_${tag}_${worker}`;
const seedStream = (s) => `ledger-test-acct_seed_${s}`;

const began = performance.now();
/** Progress on stderr (BENCH_VERBOSE=1), with the seconds since the run began. */
const note = (what) => process.env.BENCH_VERBOSE && process.stderr.write(`[${((performance.now() - began) / 1000).toFixed(1)} s] ${what}\n`);

/**
 * Starts timing; the returned function gives the wall time since, and this process's CPU
 * time since (user + system: the load generator's own cost, the server's not included,
 * except PGlite's, which runs in this process).
 */
function clock() {
  const t = performance.now();
  const c = process.cpuUsage();
  return () => {
    const used = process.cpuUsage(c);
    return { ms: performance.now() - t, cpuUs: used.user + used.system };
  };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// ---------------------------------------------------------------- the stand-in's client

function kurrent() {
  return require('@kurrent/kurrentdb-client');
}

/** The adapter's filter: the service's stream categories (the bench streams are ledger-). */
function serviceFilter() {
  const { streamNameFilter } = kurrent();
  const { serviceStreamPrefixes } = require(dist('event-store/eventstoredb/stream-prefixes'));
  return streamNameFilter({ prefixes: serviceStreamPrefixes() });
}

// ---------------------------------------------------------------- PGlite

/**
 * PGlite in memory from a dump file (a migrated cluster, or the seeded log): its initdb
 * takes seconds, a dump loads in about one.
 */
function openPglite(dumpFile) {
  const { PgliteDatabase } = require(dist('database/pglite-database'));
  return PgliteDatabase.open(undefined, new Blob([fs.readFileSync(dumpFile)]));
}

async function dumpPglite(db, file) {
  fs.writeFileSync(file, Buffer.from(await (await db.dump()).arrayBuffer()));
}

// ---------------------------------------------------------------- appends (child)

/** APPENDERS loops appending one event at a time, each to its own stream, for `seconds`. */
async function appendFor(seconds, append) {
  let next = 0;
  const until = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: APPENDERS }, async (_, worker) => {
      let expected = 'no_stream';
      while (Date.now() < until) expected = await append(worker, next++, expected);
    }),
  );
}

/** { append(stream, i, expected) -> next revision, verify(counts), close } for one subject. */
async function appenders(backend, subject, target) {
  if (backend === 'standin') {
    if (subject === 'ours') {
      const { EventStoreDbEventStore } = require(dist('event-store/eventstoredb/eventstoredb-event-store'));
      const store = new EventStoreDbEventStore({ url: target });
      await store.start();
      return {
        append: async (stream, i, expected) => (await store.append(stream, [{ type: 'SaleRecorded', data: payload(i) }], expected)).nextRevision,
        client: store.client,
        close: () => store.close(),
      };
    }
    const { KurrentDBClient, jsonEvent } = kurrent();
    const client = KurrentDBClient.connectionString(target);
    return {
      append: async (stream, i, expected) => {
        const event = jsonEvent({ id: randomUUID(), type: 'SaleRecorded', data: payload(i), metadata: {} });
        const result = await client.appendToStream(stream, event, { streamState: typeof expected === 'number' ? BigInt(expected) : expected });
        return Number(result.nextExpectedRevision);
      },
      client,
      close: () => client.dispose(),
    };
  }
  const { PostgresEventStore } = require(dist('event-store/postgres/postgres-event-store'));
  let db;
  let raw;
  if (backend === 'pglite') {
    db = await openPglite(target); // migrated already
    raw = db.db; // the PGlite instance itself
  } else {
    const { PostgresDatabase } = require(dist('database/postgres-database'));
    const { Pool } = require('pg');
    // One connection per appender, as the service's pool would give them.
    db = new PostgresDatabase(target, APPENDERS);
    raw = new Pool({ connectionString: target, max: APPENDERS });
  }
  const verifyOn = async (counts) => {
    const { rows } = await db.query(
      `SELECT stream_id, count(*)::int AS n, min(stream_revision)::int AS lo, max(stream_revision)::int AS hi,
              count(DISTINCT stream_revision)::int AS distinct_revisions
         FROM events WHERE stream_id LIKE $1 GROUP BY stream_id`,
      [`ledger-test-acct_bench_${tag}_%`],
    );
    const byStream = new Map(rows.map((r) => [r.stream_id, r]));
    counts.forEach((n, worker) => {
      const r = byStream.get(streamOf(worker));
      if (!r || r.n !== n || r.lo !== 0 || r.hi !== n - 1 || r.distinct_revisions !== n) throw new Error(`${streamOf(worker)}: ${JSON.stringify(r)}, expected ${n} events`);
    });
    if (rows.length !== counts.length) throw new Error(`${rows.length} bench streams, expected ${counts.length}`);
  };
  if (subject === 'ours') {
    const store = new PostgresEventStore(db);
    await store.start();
    return {
      append: async (stream, i, expected) => (await store.append(stream, [{ type: 'SaleRecorded', data: payload(i) }], expected)).nextRevision,
      verify: verifyOn,
      close: async () => {
        await store.close();
        await db.close();
        if (backend === 'postgres') await raw.end();
      },
    };
  }
  return {
    append: async (stream, i, expected) => {
      const events = [{ id: randomUUID(), type: 'SaleRecorded', data: payload(i), metadata: {} }];
      const { rows } = await raw.query('SELECT * FROM append_to_stream($1, $2, $3::jsonb)', [stream, String(expected), JSON.stringify(events)]);
      return Number(rows[0].next_revision);
    },
    verify: verifyOn,
    close: async () => {
      await db.close();
      if (backend === 'postgres') await raw.end();
    },
  };
}

async function verifyStandIn(client, counts) {
  for (const [worker, n] of counts.entries()) {
    let revision = 0;
    for await (const resolved of client.readStream(streamOf(worker))) {
      if (Number(resolved.event.revision) !== revision) throw new Error(`${streamOf(worker)}: revision ${resolved.event.revision} at ${revision}`);
      revision++;
    }
    if (revision !== n) throw new Error(`${streamOf(worker)}: ${revision} events, expected ${n}`);
  }
}

async function appendsChild(backend, subject, target, measurement) {
  tag = measurement;
  const subjectOps = await appenders(backend, subject, target);
  // Warm-up on streams of their own: connections open, plans cached, JIT warm.
  await appendFor(WARM_UP_SECONDS, (w, i, expected) => subjectOps.append(`ledger-test-acct_warm_${tag}_${w}`, i, expected));
  const counts = Array(APPENDERS).fill(0);
  let next = 0;
  const until = Date.now() + SECONDS * 1000;
  const stop = clock();
  await Promise.all(
    Array.from({ length: APPENDERS }, async (_, worker) => {
      let expected = 'no_stream';
      while (Date.now() < until) {
        const revision = await subjectOps.append(streamOf(worker), next++, expected);
        if (revision !== counts[worker]) throw new Error(`${streamOf(worker)}: next revision ${revision} after ${counts[worker]} appends`);
        counts[worker]++;
        expected = revision;
        // PGlite answers on microtasks: let timers run.
        if (backend === 'pglite') await new Promise(setImmediate);
      }
    }),
  );
  const { ms, cpuUs } = stop();
  const total = counts.reduce((a, b) => a + b, 0);
  if (backend === 'standin') await verifyStandIn(subjectOps.client, counts);
  else await subjectOps.verify(counts);
  await subjectOps.close();
  return { rate: total / (ms / 1000), cpuUsPerEvent: cpuUs / total, events: total };
}

// ---------------------------------------------------------------- catch-up (child)

/** Checks each event as it arrives: strictly increasing positions, the seeded checksum. */
function tally() {
  let count = 0;
  let sum = 0;
  let last = '';
  return {
    see(position, data) {
      if (position <= last) throw new Error(`position ${position} after ${last}`);
      last = position;
      count++;
      sum += data.amount_cents;
    },
    get count() {
      return count;
    },
    check() {
      if (count !== EVENTS) throw new Error(`caught up after ${count} events, expected ${EVENTS}`);
      if (sum !== checksum(EVENTS)) throw new Error(`checksum ${sum}, expected ${checksum(EVENTS)}`);
    },
  };
}

/** Our adapter: subscribeToAll from START, timed until its first onCaughtUp. */
async function catchUpOurs(store) {
  const { START } = require(dist('event-store/event-store'));
  const seen = tally();
  let caughtUp;
  const done = new Promise((resolve) => (caughtUp = resolve));
  const stop = clock();
  const subscription = store.subscribeToAll(
    START,
    async (events) => {
      for (const e of events) seen.see(e.position, e.data);
    },
    { batchSize: BATCH, onCaughtUp: async () => caughtUp(stop()), onError: (error) => caughtUp(error) },
  );
  const ended = await done;
  await subscription.stop();
  if (ended instanceof Error || !('ms' in Object(ended))) throw ended;
  seen.check();
  return ended;
}

const pad = (n) => String(n).padStart(20, '0');

async function catchUpStandIn(subject, target) {
  if (subject === 'ours') {
    const { EventStoreDbEventStore } = require(dist('event-store/eventstoredb/eventstoredb-event-store'));
    const store = new EventStoreDbEventStore({ url: target });
    await store.start(); // connected: one read of the head
    const measured = await catchUpOurs(store);
    await store.close();
    return measured;
  }
  const { KurrentDBClient, START, END, BACKWARDS, FORWARDS } = kurrent();
  const client = KurrentDBClient.connectionString(target);
  const filter = serviceFilter();
  for await (const _ of client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1, filter })); // connected
  const seen = tally();
  const stop = clock();
  if (subject === 'raw') {
    const subscription = client.subscribeToAll({ fromPosition: START, filter });
    await new Promise((resolve, reject) => {
      let caughtUp = false;
      const finish = () => caughtUp && seen.count === EVENTS && resolve();
      subscription.on('data', (resolved) => {
        try {
          seen.see(`${pad(resolved.event.position.commit)}:${pad(resolved.event.position.prepare)}`, resolved.event.data);
        } catch (error) {
          reject(error);
        }
        finish();
      });
      subscription.once('caughtUp', () => {
        caughtUp = true;
        finish();
      });
      subscription.once('error', reject);
    });
    const measured = stop();
    await subscription.unsubscribe();
    seen.check();
    await client.dispose();
    return measured;
  }
  // raw-paged: the adapter's reads without the adapter. A read from a position includes
  // the event at it: skip that one, ask for one more.
  let from = START;
  let after = null;
  for (;;) {
    let n = 0;
    for await (const resolved of client.readAll({ direction: FORWARDS, fromPosition: from, maxCount: BATCH + 1, filter })) {
      const p = resolved.event.position;
      if (after && p.commit === after.commit && p.prepare === after.prepare) continue;
      seen.see(`${pad(p.commit)}:${pad(p.prepare)}`, resolved.event.data);
      after = p;
      if (++n === BATCH) break;
    }
    if (n < BATCH) break;
    from = after;
  }
  const measured = stop();
  seen.check();
  await client.dispose();
  return measured;
}

const COLUMNS = `transaction_id::text AS commit_id, global_position, event_id::text, stream_id,
  stream_revision, type, data, metadata, created_at`;

async function catchUpPostgres(backend, subject, target) {
  const { PostgresEventStore } = require(dist('event-store/postgres/postgres-event-store'));
  let db;
  if (backend === 'pglite') db = await openPglite(target);
  else db = new (require(dist('database/postgres-database')).PostgresDatabase)(target, 4);
  if (subject === 'ours') {
    const store = new PostgresEventStore(db);
    await store.start();
    await store.headPosition(); // connected
    const measured = await catchUpOurs(store);
    await store.close();
    await db.close();
    return measured;
  }
  let raw;
  if (backend === 'pglite') raw = db.db;
  else {
    raw = new (require('pg').Client)({ connectionString: target });
    await raw.connect();
  }
  await raw.query('SELECT 1');
  const seen = tally();
  const stop = clock();
  let commit = '0';
  let prepare = '0';
  for (;;) {
    const { rows } = await raw.query(
      `SELECT ${COLUMNS} FROM events WHERE (transaction_id, global_position) > ($1::text::xid8, $2::bigint)
        ORDER BY transaction_id, global_position LIMIT $3`,
      [commit, prepare, BATCH],
    );
    for (const r of rows) seen.see(`${pad(r.commit_id)}:${pad(r.global_position)}`, r.data);
    if (rows.length < BATCH) break;
    ({ commit_id: commit, global_position: prepare } = rows[rows.length - 1]);
  }
  const measured = stop();
  seen.check();
  if (backend !== 'pglite') await raw.end();
  await db.close();
  return measured;
}

async function catchUpChild(backend, subject, target) {
  const { ms, cpuUs } = backend === 'standin' ? await catchUpStandIn(subject, target) : await catchUpPostgres(backend, subject, target);
  return { rate: EVENTS / (ms / 1000), cpuUsPerEvent: cpuUs / EVENTS, events: EVENTS };
}

// ---------------------------------------------------------------- orchestration (parent)

/** The stand-in as its own server process; resolves { url, stop }. */
function startStandIn() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, 'esdb-standin-server.js')], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.once('exit', (code) => reject(new Error(`the stand-in exited with ${code}`)));
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (!out.includes('\n')) return;
      const { port } = JSON.parse(out);
      resolve({
        url: `kurrentdb://127.0.0.1:${port}?tls=false`,
        stop: () => new Promise((r) => (child.exitCode !== null ? r() : (child.once('exit', r), child.kill('SIGTERM')))),
      });
    });
  });
}

/** A fresh database on the server, migrated; `drop` removes it (ours only, by name). */
async function createDatabase(prefix) {
  const { Client } = require('pg');
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  // Another session using template1 at that moment makes CREATE DATABASE fail: try again.
  for (let attempt = 0; ; attempt++) {
    try {
      await admin.query(`CREATE DATABASE ${name}`);
      break;
    } catch (error) {
      if (attempt >= 10 || !/being accessed by other users/.test(error.message)) throw error;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const { PostgresDatabase } = require(dist('database/postgres-database'));
  const { migrate } = require(dist('database/migrate'));
  const db = new PostgresDatabase(url.toString(), 2);
  await migrate(db);
  await db.close();
  return {
    url: url.toString(),
    drop: async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

function runChild(figure, backend, subject, target, measurement = '') {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, [__filename, '--child', figure, backend, subject, target, measurement], { maxBuffer: 1 << 20, env: process.env }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`${figure} ${backend} ${subject} failed: ${stderr || error.message}`));
      resolve(JSON.parse(stdout));
    }),
  );
}

/**
 * The stand-in for the append rounds: one process, warmed up here first for 8 s (a fresh
 * one ran its first half-minute of appends at half the speed of later, JIT and all); each
 * measurement appends to streams of its own.
 */
async function appendsStandIn() {
  const standIn = await startStandIn();
  const { KurrentDBClient, jsonEvent } = kurrent();
  const client = KurrentDBClient.connectionString(standIn.url);
  await appendFor(8, async (worker, i, expected) => {
    const event = jsonEvent({ id: randomUUID(), type: 'SaleRecorded', data: payload(i), metadata: {} });
    const result = await client.appendToStream(`ledger-test-acct_warm_parent_${worker}`, event, { streamState: typeof expected === 'number' ? BigInt(expected) : expected });
    return Number(result.nextExpectedRevision);
  });
  await client.dispose();
  return standIn;
}

let measurements = 0;

/** One append measurement: on the stand-in's own streams, a fresh database, or a fresh PGlite. */
async function measureAppends(backend, subject, standIn) {
  const measurement = `m${measurements++}`;
  if (backend === 'standin') return runChild('appends', backend, subject, standIn.url, measurement);
  if (backend === 'pglite') return runChild('appends', backend, subject, await pgliteTemplate(), measurement);
  const database = await createDatabase('bench_es_appends');
  try {
    return await runChild('appends', backend, subject, database.url, measurement);
  } finally {
    await database.drop();
  }
}

let scratchDir = null;
/** A temporary directory for this run's PGlite dumps, removed when the run exits. */
function scratch() {
  if (scratchDir) return scratchDir;
  scratchDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-es-'));
  process.on('exit', () => fs.rmSync(scratchDir, { recursive: true, force: true }));
  return scratchDir;
}

let template = null;

/** A dump of a migrated, empty PGlite cluster, made once a run. */
async function pgliteTemplate() {
  if (template) return template;
  const { PgliteDatabase } = require(dist('database/pglite-database'));
  const { migrate } = require(dist('database/migrate'));
  const db = await PgliteDatabase.open();
  await migrate(db);
  template = path.join(scratch(), 'migrated.tar');
  await dumpPglite(db, template);
  await db.close();
  return template;
}

/** The log to catch up on: EVENTS sales, PER_STREAM a stream, appended PER_STREAM at a time. */
const seedBatches = () => Array.from({ length: EVENTS / PER_STREAM }, (_, s) => ({ stream: seedStream(s), from: s * PER_STREAM }));

async function seedStandIn(url) {
  const { KurrentDBClient, jsonEvent } = kurrent();
  const client = KurrentDBClient.connectionString(url);
  const batches = seedBatches();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let b = batches.shift(); b; b = batches.shift()) {
        const events = Array.from({ length: PER_STREAM }, (_, i) => jsonEvent({ id: randomUUID(), type: 'SaleRecorded', data: payload(b.from + i), metadata: {} }));
        await client.appendToStream(b.stream, events, { streamState: 'no_stream' });
      }
    }),
  );
  await client.dispose();
}

async function seedSql(db) {
  const batches = seedBatches();
  await Promise.all(
    Array.from({ length: db.kind === 'pglite' ? 1 : 8 }, async () => {
      for (let b = batches.shift(); b; b = batches.shift()) {
        const events = Array.from({ length: PER_STREAM }, (_, i) => ({ id: randomUUID(), type: 'SaleRecorded', data: payload(b.from + i), metadata: {} }));
        await db.query('SELECT * FROM append_to_stream($1, $2, $3::jsonb)', [b.stream, 'no_stream', JSON.stringify(events)]);
      }
    }),
  );
  // Both readers find the pages as settled (hint bits set, visibility map, statistics).
  await db.exec('VACUUM ANALYZE events');
}

/**
 * A fresh stand-in's read path (encoding events, the filter), a few thousand events, untimed.
 * Not its subscription path: that writes out the whole log however few the reader wants.
 */
async function warmStandInReads(url) {
  const { KurrentDBClient, START, FORWARDS } = kurrent();
  const client = KurrentDBClient.connectionString(url);
  const filter = serviceFilter();
  for (let round = 0; round < 3; round++) {
    for await (const _ of client.readAll({ direction: FORWARDS, fromPosition: START, maxCount: BATCH, filter }));
  }
  await client.dispose();
}

/** Seeds once per backend; returns { target, cleanup } for the catch-up children. */
async function prepareLog(backend) {
  if (backend === 'standin') {
    const standIn = await startStandIn();
    await seedStandIn(standIn.url);
    return { target: standIn.url, cleanup: standIn.stop };
  }
  if (backend === 'pglite') {
    const db = await openPglite(await pgliteTemplate());
    await seedSql(db);
    const file = path.join(scratch(), 'log.tar');
    await dumpPglite(db, file);
    await db.close();
    return { target: file, cleanup: async () => fs.rmSync(file, { force: true }) };
  }
  const database = await createDatabase('bench_es_catchup');
  const { PostgresDatabase } = require(dist('database/postgres-database'));
  const db = new PostgresDatabase(database.url, 8);
  await seedSql(db);
  await db.close();
  return { target: database.url, cleanup: database.drop };
}

/** Rounds with the subjects' order rotated by one each round; medians. */
async function rounds(subjects, measure) {
  const rates = Object.fromEntries(subjects.map((s) => [s, []]));
  const cpu = Object.fromEntries(subjects.map((s) => [s, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = subjects.map((_, i) => subjects[(i + round) % subjects.length]);
    if (subjects.length === 2 && round % 2 === 1) order.reverse(); // two subjects: plain alternation
    for (const subject of order) {
      const result = await measure(subject);
      rates[subject].push(result.rate);
      cpu[subject].push(result.cpuUsPerEvent);
      note(`${subject}: ${Math.round(result.rate)}/s, ${result.cpuUsPerEvent.toFixed(1)} µs CPU an event`);
    }
  }
  return Object.fromEntries(subjects.map((s) => [s, { median: median(rates[s]), all: rates[s].map(Math.round), cpu: median(cpu[s]) }]));
}

const RAW = {
  appends: {
    standin: 'client.appendToStream',
    postgres: 'append_to_stream() on pg.Pool',
    pglite: 'append_to_stream() on PGlite',
  },
  catchup: {
    standin: 'client.subscribeToAll to caughtUp',
    postgres: 'keyset SELECT, pages of 2000, pg',
    pglite: 'keyset SELECT, pages of 2000',
  },
};

async function main() {
  const onlyArg = process.argv.indexOf('--only');
  // PGlite is opt-in: each of its children loads a 40 MB cluster dump and its single
  // connection reads slowly, which would double the run's time.
  const backends = onlyArg > 0 ? process.argv[onlyArg + 1].split(',') : ['standin', 'postgres', ...(process.env.BENCH_PGLITE ? ['pglite'] : [])];
  for (const b of backends) if (!['standin', 'postgres', 'pglite'].includes(b)) throw new Error(`unknown backend ${b}`);
  const results = [];
  const add = (figure, backend, ours, raw, rawName) =>
    results.push({
      figure,
      backend,
      ours_per_s: Math.round(ours.median),
      raw_per_s: Math.round(raw.median),
      ratio: +(ours.median / raw.median).toFixed(2),
      ours_cpu_us: +ours.cpu.toFixed(1),
      raw_cpu_us: +raw.cpu.toFixed(1),
      cpu_ratio: +(ours.cpu / raw.cpu).toFixed(2),
      raw: rawName,
      rounds: { ours: ours.all, raw: raw.all },
    });

  for (const backend of backends) {
    const standIn = backend === 'standin' ? await appendsStandIn() : null;
    try {
      const r = await rounds(['ours', 'raw'], (subject) => measureAppends(backend, subject, standIn));
      add('appends/s', backend, r.ours, r.raw, RAW.appends[backend]);
    } finally {
      await standIn?.stop();
    }
  }
  for (const backend of backends) {
    note(`seeding ${EVENTS} events on ${backend}`);
    const log = await prepareLog(backend);
    if (backend === 'standin') await warmStandInReads(log.target);
    note('seeded');
    try {
      const subjects = backend === 'standin' ? ['ours', 'raw', 'raw-paged'] : ['ours', 'raw'];
      const r = await rounds(subjects, (subject) => runChild('catchup', backend, subject, log.target));
      add('catch-up events/s', backend, r.ours, r.raw, RAW.catchup[backend]);
      if (r['raw-paged']) add('catch-up events/s', backend, r.ours, r['raw-paged'], 'client.readAll, pages of 2000');
    } finally {
      await log.cleanup();
    }
  }

  if (process.argv.includes('--json')) return console.log(JSON.stringify(results, null, 2));
  console.log(`event store adapters against their raw client: ${APPENDERS} appenders x ${SECONDS} s; catch-up over ${EVENTS} events, batches of ${BATCH}; median of ${ROUNDS} rounds, order alternated`);
  const names = { standin: 'stand-in', postgres: 'postgres', pglite: 'pglite' };
  console.log(`  ${'figure'.padEnd(18)} ${'backend'.padEnd(9)} ${'ours'.padStart(9)} ${'raw'.padStart(9)} ${'ratio'.padStart(6)}   ${'CPU µs/event ours / raw (ratio)'.padEnd(32)} raw is`);
  for (const r of results) {
    const cpu = `${r.ours_cpu_us} / ${r.raw_cpu_us} (${r.cpu_ratio.toFixed(2)})`;
    console.log(`  ${r.figure.padEnd(18)} ${names[r.backend].padEnd(9)} ${String(r.ours_per_s).padStart(9)} ${String(r.raw_per_s).padStart(9)} ${r.ratio.toFixed(2).padStart(6)}   ${cpu.padEnd(32)} ${r.raw}`);
  }
  console.log('  CPU: of the load generator\'s process while timed (PGlite\'s includes the database, in that process)');
  console.log('  (the stand-in is an in-memory test server: its figures are our adapter against the raw client on it, not a real EventStoreDB\'s speed)');
}

if (process.argv[2] === '--child') {
  const [figure, backend, subject, target, measurement] = process.argv.slice(3);
  (figure === 'appends' ? appendsChild(backend, subject, target, measurement) : catchUpChild(backend, subject, target))
    .then((result) => {
      process.stdout.write(JSON.stringify(result));
      // gRPC channels and pools may hold the loop open a moment longer: the figure is out.
      process.exit(0);
    })
    .catch((error) => {
      console.error(error);
      process.exit(1);
    });
} else {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
