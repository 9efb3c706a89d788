/**
 * What the HTTP benchmarks share: servers each in their own process, autocannon in its own
 * process (so the load generator never shares an event loop with what it measures), medians.
 */
const { spawn, execFile } = require('node:child_process');
const net = require('node:net');
const path = require('node:path');

const ADMIN = 'bench-admin-token';
const MAIN = path.join(__dirname, '../dist/src/main.js');

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Node's options for the service's process: BENCH_SERVICE_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles it under load. */
const serviceNodeArgs = () => (process.env.BENCH_SERVICE_NODE_ARGS || '').split(' ').filter(Boolean);

/** Starts `script` on a fresh PORT, with the Node binary `node` (default this one); resolves once `ready(base)` is true. */
async function serve(script, env, ready, node = process.execPath) {
  const port = await freePort();
  const child = spawn(node, [...(script === MAIN ? serviceNodeArgs() : []), script], { env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'inherit'] });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`${script} exited with ${child.exitCode}`);
    try {
      if (await ready(base)) break;
    } catch {
      // not listening yet
    }
    if (i > 3000) throw new Error(`${script} did not start`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const stop = () => new Promise((r) => (child.exitCode !== null ? r() : (child.once('exit', r), child.kill('SIGTERM'))));
  return { base, stop, pid: child.pid };
}

/** The service (dist/src/main.js) on a database; `workers: false` runs no projections or subscribers. */
function serveService(url, { workers, node }, ready = async (b) => (await fetch(`${b}/healthz`)).status > 0) {
  return serve(MAIN, { DATABASE_URL: url, ADMIN_TOKEN: ADMIN, NODE_ENV: 'development', LOG_LEVEL: 'warn', WORKERS: String(workers) }, ready, node);
}

async function admin(base, method, route, body) {
  const r = await fetch(`${base}${route}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, ...(body && { 'content-type': 'application/json' }) },
    body: body && JSON.stringify(body),
  });
  if (r.status !== 200 && r.status !== 201) throw new Error(`${method} ${route}: ${r.status} ${await r.text()}`);
  return r.json();
}

/** Every read model has read the whole log, and none is being rebuilt. */
const settled = (status) => status.items.every((p) => !p.behind && !p.rebuilding);

/**
 * Polls `GET /admin/projections` every `intervalMs` until `done(status)`, as `svc projections
 * rebuild` does, and returns that status; a service not answering yet counts as not done.
 */
async function untilProjections(base, done, { intervalMs = 200, timeoutMs = 10 * 60_000 } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let failure;
    try {
      const status = await admin(base, 'GET', '/admin/projections');
      if (done(status)) return status;
    } catch (error) {
      failure = error;
    }
    if (Date.now() > deadline) throw failure ?? new Error('the projections did not get there in time');
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** An account and a test-mode key, made with the workers on (the key's read model must have it), then stopped. */
async function makeKey(url) {
  const service = await serveService(url, { workers: true });
  try {
    const account = await admin(service.base, 'POST', '/admin/accounts', { name: 'Bench', email: 'bench@example.com' });
    const { key } = await admin(service.base, 'POST', '/admin/keys', { account: account.id, mode: 'test' });
    for (let i = 0; ; i++) {
      const status = await admin(service.base, 'GET', '/admin/projections');
      if (status.items.every((p) => !p.behind && !p.rebuilding)) break;
      if (i > 3000) throw new Error('the service did not catch up');
      await new Promise((r) => setTimeout(r, 100));
    }
    return key;
  } finally {
    await service.stop();
  }
}

/** autocannon in its own process; p50 and p99 in ms, req/s. Any non-2xx or error fails the run. */
function load(url, { key, connections, seconds }) {
  const args = [require.resolve('autocannon/autocannon.js'), '-c', String(connections), '-d', String(seconds), '-j'];
  if (key) args.push('-H', `authorization=Bearer ${key}`);
  return new Promise((resolve, reject) =>
    execFile(process.execPath, [...args, url], { maxBuffer: 64 << 20 }, (error, stdout) => {
      if (error) return reject(error);
      const r = JSON.parse(stdout);
      if (r.non2xx || r.errors) return reject(new Error(`${url}: ${r.non2xx} non-2xx and ${r.errors} errors`));
      resolve({ p50: r.latency.p50, p99: r.latency.p99, rps: r.requests.average });
    }),
  );
}

/** Polls `url` until `ok(status)` holds. */
async function waitFor(url, ok) {
  for (let i = 0; i < 300; i++) {
    try {
      if (ok((await fetch(url)).status)) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not come up`);
}

/**
 * The service with `env` (its own database settings) on a free port, resolved once it
 * answers; its child process is the caller's to kill (BENCH_SERVICE_NODE_ARGS as above).
 */
async function startService(env, adminToken = ADMIN) {
  const port = await freePort();
  const child = spawn(process.execPath, [...serviceNodeArgs(), MAIN], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env, PORT: String(port), ADMIN_TOKEN: adminToken, NODE_ENV: 'development' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  await waitFor(`${base}/v1/me`, (status) => status === 401);
  return { base, child };
}

/** Database `name` on the server DATABASE_URL names. */
function dbUrl(serverUrl, name) {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A sale as the ledger records it: the payload size of a typical event. */
const salePayload = (i) => ({
  account_id: 'acct_bench',
  mode: 'test',
  transaction_id: `txn_${i}`,
  amount_cents: 1000 + (i % 500),
  fee_cents: 150,
  currency: 'usd',
  source: { purchase_id: `pur_${i}` },
  description: 'Sale of Bench model',
});

/** The seeded history's ledgers each hold this many sales. */
const SALES_PER_LEDGER = 200;

/** Sale `i` of ledger `l`, as RecordSale writes it. */
function ledgerSale(l, i) {
  const amount = 1000 + ((l * 7 + i) % 500);
  const fee = Math.round(amount * 0.15);
  return {
    transaction_id: `txn_${l}_${i}`,
    account_id: `acct_bench_${l}`,
    mode: 'test',
    purchase_id: `pur_${l}_${i}`,
    asset: { id: `lst_${i % 50}`, slug: `bench-model-${i % 50}`, title: `Bench model ${i % 50}` },
    amount_cents: amount,
    fee_cents: fee,
    net_cents: amount - fee,
    fee_bps: 1500,
    currency: 'usd',
    description: `Sale of Bench model ${i % 50}`,
    created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
  };
}

/**
 * A history of `count` sales (ledgers of SALES_PER_LEDGER) appended through the Postgres event store to
 * the database at `url`, migrated first; resolves to the number of events.
 */
async function seedLedgers(url, count) {
  const dist = (p) => path.join(__dirname, '../dist/src', p);
  const { PostgresDatabase } = require(dist('database/postgres-database'));
  const { migrate } = require(dist('database/migrate'));
  const { PostgresEventStore } = require(dist('event-store/postgres/postgres-event-store'));
  const db = new PostgresDatabase(url, 8);
  await migrate(db);
  const store = new PostgresEventStore(db);
  const ledgers = Math.ceil(count / SALES_PER_LEDGER);
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let l = next++; l < ledgers; l = next++) {
        const events = Array.from({ length: SALES_PER_LEDGER }, (_, i) => ({ type: 'SaleRecorded', data: ledgerSale(l, i) }));
        await store.append(`ledger-test-acct_bench_${l}`, events, 'no_stream');
      }
    }),
  );
  await store.close();
  await db.close();
  return ledgers * SALES_PER_LEDGER;
}

/** Writes `size` bytes of `chunk` (repeated) into an outgoing request as fast as backpressure allows, then ends it. */
function pumpBody(req, size, chunk) {
  let sent = 0;
  const pump = () => {
    while (sent < size) {
      const piece = size - sent >= chunk.length ? chunk : chunk.subarray(0, size - sent);
      sent += piece.length;
      if (!req.write(piece)) return req.once('drain', pump);
    }
    req.end();
  };
  pump();
}

module.exports = { ADMIN, SALES_PER_LEDGER, admin, dbUrl, freePort, ledgerSale, load, makeKey, median, pumpBody, salePayload, seedLedgers, serve, serveService, settled, startService, untilProjections, waitFor };
