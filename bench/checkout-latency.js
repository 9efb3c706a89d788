#!/usr/bin/env node
/**
 * Command latency through the whole service (issue 9): POST /v1/purchases -> pay on the
 * sandbox page -> the purchase in the buyer's GET /v1/purchases and the sale in the seller's
 * GET /v1/balance_transactions. p50/p99 at c=1 and c=20, on PGlite and on the Postgres
 * server; on the server also with a transaction held open (idle, with an id) in another
 * database, which must change nothing, and while `rebuild --all` runs back to back. Also "checkout-to-ledger": from the payment post to
 * the sale readable in the seller's ledger.
 *
 * The service runs as its own process (node dist/src/main.js); this process only sends
 * requests. Conditions alternate within each round; figures are medians over rounds.
 *   node bench/checkout-latency.js [--json]     (npm run build first)
 * DATABASE_URL names the server (default postgres://postgres@127.0.0.1:5432/postgres); the
 * bench creates and drops its own database there, with a history of BENCH_HISTORY sales
 * (default 100,000) appended first, so that a rebuild replays a log of some size. BENCH_ROUNDS (default 3);
 * BENCH_BACKENDS=postgres leaves PGlite out.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('pg');
const { ADMIN, admin, seedLedgers, settled, startService, untilProjections } = require('./harness');
const { onnxModel } = require('./onnx-model');

const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const json = process.argv.includes('--json');
const BACKENDS = (process.env.BENCH_BACKENDS || 'pglite,postgres').split(',');
const serverUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const PHASES = [
  { concurrency: 1, checkouts: 800 },
  { concurrency: 20, checkouts: 200 },
];
const MODELS = 12;
const WARM_UP = 20;
/** Sales already in the log on the Postgres server, so that a rebuild replays a history, not just the bench's own events. */
const HISTORY = Number(process.env.BENCH_HISTORY ?? 100_000);

function client(base) {
  const call = async (method, route, { key = ADMIN, body, form } = {}) => {
    const headers = { authorization: `Bearer ${key}` };
    let payload;
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    if (form !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      payload = form;
    }
    const res = await fetch(route.startsWith('http') ? route : `${base}${route}`, { method, headers, body: payload });
    const text = await res.text();
    let parsed;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
    return { status: res.status, body: parsed };
  };
  return call;
}

async function setUp(call, buyers) {
  // One seller per model: a sale loads its seller's ledger stream, so one seller taking every
  // sale of the run would make later phases slower than earlier ones, whatever their condition.
  const models = [];
  for (let i = 0; i < MODELS; i++) {
    const seller = await call('POST', '/admin/accounts', { body: { name: `Bench Seller ${i}`, email: `seller${i}@example.com` } });
    const sellerKey = (await call('POST', '/admin/keys', { body: { account: seller.body.id, mode: 'test' } })).body.key;
    const content = onnxModel(`onnx-bytes-${i}`);
    const grant = (await call('POST', '/v1/uploads', { key: sellerKey, body: { file_name: 'policy.onnx', file_size: content.length } })).body;
    const put = await fetch(grant.upload_url, { method: 'PUT', body: content, headers: { 'content-type': 'application/octet-stream' } });
    if (put.status !== 200) throw new Error(`upload failed: ${put.status}`);
    const model = await call('POST', '/v1/models', {
      key: sellerKey,
      body: { title: `Bench Policy ${i}`, type: 'rl-policy', license: 'MIT', price_cents: 1000, storage_path: grant.storage_path, file_name: grant.file_name, file_size: grant.file_size, file_extension: grant.file_extension },
    });
    if (model.status !== 201) throw new Error(`publish failed: ${JSON.stringify(model.body)}`);
    models.push({ id: model.body.id, sellerKey });
  }
  const keys = [];
  for (let i = 0; i < buyers; i++) {
    const account = await call('POST', '/admin/accounts', { body: { name: `Bench Buyer ${i}`, email: `b${i}@example.com` } });
    keys.push((await call('POST', '/admin/keys', { body: { account: account.body.id, mode: 'test', scopes: ['models:read'] } })).body.key);
  }
  // Every (buyer, model) pair can be bought once: hand them out in order.
  const pairs = [];
  for (const key of keys) for (const model of models) pairs.push({ key, model });
  return { pairs };
}

async function checkout(call, { key, model }) {
  const start = performance.now();
  const session = await call('POST', '/v1/purchases', { key, body: { asset: model.id } });
  if (session.status !== 201) throw new Error(`purchase: ${session.status} ${JSON.stringify(session.body)}`);
  const paidAt = performance.now();
  const paid = await call('POST', session.body.checkout_url, { form: 'card_number=4242424242424242' });
  if (paid.status !== 200) throw new Error(`pay: ${paid.status}`);
  for (;;) {
    const [purchases, ledger] = await Promise.all([
      call('GET', '/v1/purchases', { key }),
      call('GET', '/v1/balance_transactions?type=sale&limit=200', { key: model.sellerKey }),
    ]);
    const purchase = purchases.body.items.find((p) => p.checkout_session_id === session.body.id);
    const sale = purchase && ledger.body.items.find((t) => t.source && t.source.purchase_id === purchase.id);
    if (sale) {
      const end = performance.now();
      return { total: end - start, toLedger: end - paidAt };
    }
    // Gentle enough that twenty pollers do not become the load (the answer is usually there already).
    await new Promise((r) => setTimeout(r, 5));
  }
}

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
const median = (values) => quantile(values, 0.5);

async function phase(call, pairs, { concurrency, checkouts }) {
  const totals = [];
  const toLedger = [];
  const work = pairs.splice(0, checkouts);
  if (work.length < checkouts) throw new Error('ran out of buyer/model pairs');
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let next = work.shift(); next; next = work.shift()) {
        const r = await checkout(call, next);
        totals.push(r.total);
        toLedger.push(r.toLedger);
      }
    }),
  );
  return { p50: quantile(totals, 0.5), p99: quantile(totals, 0.99), ledgerP50: quantile(toLedger, 0.5) };
}

async function holdIdleTransaction() {
  const other = new URL(serverUrl);
  other.pathname = '/postgres';
  const idle = new Client({ connectionString: other.toString() });
  await idle.connect();
  await idle.query('BEGIN');
  await idle.query('SELECT pg_current_xact_id()');
  return async () => {
    await idle.query('ROLLBACK');
    await idle.end();
  };
}

/**
 * `svc projections rebuild --all`, back to back, until released: every read model is rebuilt
 * beside the live one meanwhile. Like the CLI, it watches the status until the new builds serve.
 */
function rebuildAll(base) {
  let running = true;
  let rebuilds = 0;
  const rebuilding = (status) => status.items.some((p) => p.rebuilding);
  const loop = (async () => {
    while (running) {
      const answer = await admin(base, 'POST', '/admin/projections/all/rebuild');
      if (rebuilding(answer)) await untilProjections(base, (status) => !rebuilding(status));
      rebuilds++;
    }
  })();
  return async () => {
    running = false;
    await loop;
    if (!rebuilds) throw new Error('no rebuild completed during the phase');
  };
}

/** Runs every phase under each condition, alternating their order round by round. */
async function measure(backend, env, conditions) {
  const pairsNeeded = WARM_UP + ROUNDS * conditions.length * PHASES.reduce((n, p) => n + p.checkouts, 0);
  const { base, child } = await startService(env, ADMIN);
  const call = client(base);
  try {
    // A seeded history takes a while.
    await untilProjections(base, settled);
    const { pairs } = await setUp(call, Math.ceil(pairsNeeded / MODELS) + 1);
    await phase(call, pairs, { concurrency: 4, checkouts: WARM_UP });
    const samples = {};
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? conditions : [...conditions].reverse();
      for (const condition of order) {
        const release =
          condition === 'idle transaction in another database' ? await holdIdleTransaction() : condition === 'rebuilds running' ? rebuildAll(base) : undefined;
        try {
          for (const p of PHASES) {
            const key = `${condition}|${p.concurrency}`;
            (samples[key] ??= []).push(await phase(call, pairs, p));
          }
        } finally {
          await release?.();
        }
      }
    }
    const rows = [];
    for (const condition of conditions) {
      for (const p of PHASES) {
        const s = samples[`${condition}|${p.concurrency}`];
        rows.push({
          backend,
          condition,
          concurrency: p.concurrency,
          p50_ms: +median(s.map((x) => x.p50)).toFixed(1),
          p99_ms: +median(s.map((x) => x.p99)).toFixed(1),
          checkout_to_ledger_p50_ms: +median(s.map((x) => x.ledgerP50)).toFixed(1),
        });
      }
    }
    return rows;
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

async function main() {
  const results = [];
  if (BACKENDS.includes('pglite')) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
    try {
      results.push(...(await measure('pglite', { DATA_DIR: dataDir, DATABASE_URL: '' }, ['quiet'])));
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }

  const name = `bench_${Date.now().toString(36)}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const serverDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
  try {
    if (HISTORY) await seedLedgers(url.toString(), HISTORY);
    results.push(
      ...(await measure('postgres', { DATABASE_URL: url.toString(), DATA_DIR: serverDir }, ['quiet', 'idle transaction in another database', 'rebuilds running'])),
    );
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
    fs.rmSync(serverDir, { recursive: true, force: true });
  }

  const ratios = PHASES.flatMap((p) => {
    const of = (condition) => results.find((r) => r.backend === 'postgres' && r.condition === condition && r.concurrency === p.concurrency);
    return ['idle transaction in another database', 'rebuilds running'].map((condition) => ({
      concurrency: p.concurrency,
      condition,
      p99_ratio_over_quiet: +(of(condition).p99_ms / of('quiet').p99_ms).toFixed(2),
    }));
  });
  if (json) {
    process.stdout.write(`${JSON.stringify({ rounds: ROUNDS, results, ratios })}\n`);
    return;
  }
  process.stdout.write(`purchase -> pay -> purchase listed and sale in the ledger; medians of ${ROUNDS} rounds\n`);
  for (const r of results) {
    process.stdout.write(
      `  ${r.backend.padEnd(8)} ${r.condition.padEnd(38)} c=${String(r.concurrency).padEnd(3)} p50 ${r.p50_ms} ms  p99 ${r.p99_ms} ms  checkout-to-ledger p50 ${r.checkout_to_ledger_p50_ms} ms\n`,
    );
  }
  for (const r of ratios) process.stdout.write(`  postgres c=${r.concurrency}: p99 with ${r.condition} / quiet: ${r.p99_ratio_over_quiet}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
