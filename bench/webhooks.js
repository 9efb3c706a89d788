#!/usr/bin/env node
/**
 * Webhook delivery throughput and latency, next to a baseline measured in the same run.
 *
 * The receiver runs in its own process (bench/webhook-receiver.js): it answers 204 and
 * reports each event id with its arrival time. Both the service and the baseline POST to it.
 *
 * Service, backlog: N PayoutPaid events appended by 8 concurrent appenders while the
 * webhook fan-out and the delivery worker are stopped (the projections run and are waited
 * for); then both are started and the time from that start to the last receipt gives the
 * pipeline's own rate: fan-out, claims, signed POSTs, results recorded. Deliveries per second.
 * Service, paced: events appended one at a time at BENCH_WEBHOOK_RATE/s (default 200) with
 * the workers running; p50/p99 time from append to receipt.
 * Baseline: N signed POSTs (HMAC-SHA256 over the same kind of body, keep-alive) from a
 * plain loop, as many at a time as the delivery worker sends, to the same receiver, with
 * no service running.
 *
 * BENCH_WEBHOOK_ROUNDS rounds (default 3), the order of baseline and service alternating;
 * each round's ratio is its own service rate over its own baseline; medians are reported.
 *
 * Runs on the built code (npm run build): node bench/webhooks.js [--json]
 * BENCH_WEBHOOK_EVENTS (default 1000), BENCH_WEBHOOK_RATE (default 200), BENCH_WEBHOOK_ROUNDS,
 * BENCH_WEBHOOK_CONCURRENCY (the baseline's requests in flight; default the worker's),
 * BENCH_WEBHOOK_PROFILE=dir (a CPU profile of each backlog phase);
 * DATABASE_URL to run on a Postgres server (use a scratch database: the run leaves its
 * tables and events there).
 */
require('reflect-metadata');
const crypto = require('node:crypto');
const { fork } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { Pool } = require('undici');
const { createApp } = require('../dist/src/app');
const { loadSettings } = require('../dist/src/config/settings');
const { DATABASE } = require('../dist/src/database/database');
const { EVENT_STORE } = require('../dist/src/event-store/event-store');
const { ProjectionRunner } = require('../dist/src/projection-runner/projection-runner');
const { WebhookFanOut } = require('../dist/src/webhooks/fan-out');
const { DeliveryWorker, DELIVERY_CONCURRENCY } = require('../dist/src/webhooks/delivery-worker');

const N = Number(process.env.BENCH_WEBHOOK_EVENTS || 1000);
const RATE = Number(process.env.BENCH_WEBHOOK_RATE || 200);
const ROUNDS = Number(process.env.BENCH_WEBHOOK_ROUNDS || 3);
const PACED = Math.min(N, RATE * 5);
// The baseline sends as many at a time as the delivery worker (16 before it said so), unless told.
const CONCURRENCY = Number(process.env.BENCH_WEBHOOK_CONCURRENCY || DELIVERY_CONCURRENCY || 16);
const APPENDERS = 8;
const json = process.argv.includes('--json');

/** Epoch milliseconds, sub-millisecond; comparable with the receiver's. */
const now = () => performance.timeOrigin + performance.now();
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function percentiles(latencies) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (p) => Number(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))].toFixed(2));
  return { count: latencies.length, p50_ms: at(50), p99_ms: at(99) };
}

/** The receiver process; expect(id) resolves with the time `id` arrived there; a second sighting is a duplicate. */
async function startReceiver() {
  const child = fork(path.join(__dirname, 'webhook-receiver.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const waiting = new Map();
  const early = new Map();
  const seen = new Set();
  const track = {
    duplicates: 0,
    expect(id) {
      if (early.has(id)) {
        const at = early.get(id);
        early.delete(id);
        return Promise.resolve(at);
      }
      return new Promise((resolve) => waiting.set(id, resolve));
    },
  };
  const port = await new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the receiver exited with ${code}`)));
    child.on('message', (m) => {
      if (m.port) return resolve(m.port);
      for (const [id, at] of m.arrived) {
        if (seen.has(id)) {
          track.duplicates++;
          continue;
        }
        seen.add(id);
        const resolveArrival = waiting.get(id);
        if (resolveArrival) {
          waiting.delete(id);
          resolveArrival(at);
        } else early.set(id, at);
      }
    });
  });
  return { url: `http://127.0.0.1:${port}/hooks`, track, stop: () => child.kill() };
}

/**
 * BENCH_WEBHOOK_PROFILE=dir: a CPU profile of this process (the service) over each backlog
 * phase only, written to dir as .cpuprofile.
 */
async function profiler() {
  const dir = process.env.BENCH_WEBHOOK_PROFILE;
  if (!dir) return { stop: async () => undefined };
  const inspector = require('node:inspector');
  const session = new inspector.Session();
  session.connect();
  const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (e, r) => (e ? reject(e) : resolve(r))));
  await post('Profiler.enable');
  await post('Profiler.start');
  return {
    async stop(name) {
      const { profile } = await post('Profiler.stop');
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
      session.disconnect();
    },
  };
}

async function service(receiverUrl, track, round) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
  const settings = loadSettings({ ...process.env, DATA_DIR: dataDir, ADMIN_TOKEN: 'bench', WEBHOOK_RETRY_SCHEDULE: '0,1,5' });
  const app = await createApp(settings, { logger: ['error'] });
  const fanOut = app.get(WebhookFanOut);
  const worker = app.get(DeliveryWorker);
  try {
    // Backlog: nothing fans out or sends until the events are all in.
    await worker.stop();
    await fanOut.stop();
    const fastify = app.getHttpAdapter().getInstance();
    const call = async (method, url, body, token) => {
      const res = await fastify.inject({ method, url, payload: body, headers: { authorization: `Bearer ${token}` } });
      if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.body}`);
      return JSON.parse(res.body);
    };
    const account = await call('POST', '/admin/accounts', { name: 'Bench', email: 'bench@example.com' }, 'bench');
    const key = await call('POST', '/admin/keys', { account: account.id, mode: 'test' }, 'bench');
    await call('POST', '/v1/webhook_endpoints', { url: receiverUrl, events: ['payout.paid'] }, key.key);
    const store = app.get(EVENT_STORE);
    const db = app.get(DATABASE);

    const emit = async (i) => {
      const id = crypto.randomUUID();
      const hex = id.replace(/-/g, '');
      const arrival = track.expect(`evt_${hex}`);
      const sent = now();
      const at = new Date().toISOString();
      // A PayoutPaid as the ledger records it (full shape, on the account's ledger stream), so the
      // ledger projection applies it instead of failing and retrying on every append.
      const data = {
        payout: { id: `po_${hex}`, object: 'payout', amount_cents: 100 + i, currency: 'usd', status: 'paid', created_at: at, arrival_date: at },
        account_id: account.id,
        mode: 'test',
        transaction_id: `txn_${hex}`,
        description: `Payout ${round}.${i}`,
      };
      await store.append(`ledger-test-${account.id}`, [{ id, type: 'PayoutPaid', data }], 'any');
      // Wrapped so awaiting the append does not also await the arrival.
      return { arrival, sent };
    };

    const appendStart = now();
    const backlog = [];
    let next = 0;
    const appender = async () => {
      while (next < N) backlog.push((await emit(next++)).arrival);
    };
    await Promise.all(Array.from({ length: APPENDERS }, appender));
    const appendPerSecond = Math.round((N / (now() - appendStart)) * 1000);
    // The read models (ledger, webhook endpoints) catch up before the clock starts.
    if (!(await app.get(ProjectionRunner).waitFor(await store.headPosition(), { timeoutMs: 120_000 }))) throw new Error('the projections did not catch up');

    // Round trips to the database during the backlog phase: statements outside a
    // transaction, and transactions (each several statements).
    const counts = { statements: 0, transactions: 0 };
    const query = db.query;
    const transaction = db.transaction;
    db.query = function (...args) {
      counts.statements++;
      return query.apply(this, args);
    };
    db.transaction = function (...args) {
      counts.transactions++;
      return transaction.apply(this, args);
    };
    const profile = await profiler();
    const start = now();
    const cpu = process.cpuUsage();
    fanOut.start();
    worker.start();
    const arrivals = await Promise.all(backlog);
    const elapsed = Math.max(...arrivals) - start;
    const used = process.cpuUsage(cpu);
    db.query = query;
    db.transaction = transaction;
    await profile.stop(`webhooks-backlog-${round}`);
    const { rows } = await db.query(
      `SELECT extract(epoch FROM max(created_at)) * 1000 AS queued FROM webhook_deliveries WHERE account_id = $1`,
      [account.id],
    );
    const result = {
      backlog: {
        count: N,
        per_second: Math.round((N / elapsed) * 1000),
        elapsed_ms: Math.round(elapsed),
        // When the fan-out had queued the last delivery (database clock, same machine).
        fanned_out_ms: Math.round(Number(rows[0].queued) - start),
        append_per_second: appendPerSecond,
        // CPU time of this process (the service, and the bench's bookkeeping) per delivery.
        cpu_us_per_delivery: Math.round((used.user + used.system) / N),
        statements: counts.statements,
        transactions: counts.transactions,
      },
    };

    // Paced: one event every 1/RATE s, the workers running.
    const pacedStart = now();
    const paced = [];
    // Each append starts on schedule whether or not the previous one has returned (an
    // offered load, as independent clients make it); its time counts in its latency.
    for (let i = 0; i < PACED; i++) {
      paced.push(emit(N + i).then(({ arrival, sent }) => arrival.then((t) => t - sent)));
      await sleep(Math.max(0, pacedStart + ((i + 1) * 1000) / RATE - now()));
    }
    const pacedMs = now() - pacedStart;
    result.paced = { ...percentiles(await Promise.all(paced)), rate: RATE, offered_rate: Math.round((PACED / pacedMs) * 1000) };
    // Where the paced latency goes (database clock): event -> delivery queued (fan-out), queued -> first attempt (worker).
    const split = await db.query(
      `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM d.created_at - e.created_at)) * 1000 AS fan_out,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM a.started_at - d.created_at)) * 1000 AS queued
         FROM webhook_deliveries d JOIN events e ON e.event_id = d.event_id
         JOIN webhook_delivery_attempts a ON a.delivery_id = d.id AND a.attempt = 1
        WHERE d.account_id = $1 AND e.created_at >= to_timestamp($2::double precision / 1000)`,
      [account.id, pacedStart],
    );
    result.paced.fan_out_p50_ms = Number(Number(split.rows[0].fan_out).toFixed(1));
    result.paced.queued_p50_ms = Number(Number(split.rows[0].queued).toFixed(1));
    return result;
  } finally {
    await app.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function baseline(receiverUrl, track, round) {
  const origin = new URL(receiverUrl).origin;
  const pool = new Pool(origin, { connections: CONCURRENCY });
  const secret = `whsec_test_${crypto.randomBytes(16).toString('hex')}`;
  const arrivals = [];
  let next = 0;
  const start = now();
  const cpu = process.cpuUsage();
  const worker = async () => {
    while (next < N) {
      const i = next++;
      const id = `evt_base${round}_${i}`;
      const body = JSON.stringify({ id, object: 'event', type: 'payout.paid', created: Math.floor(Date.now() / 1000), data: { object: { id: `po_${i}`, object: 'payout', amount_cents: 100 + i, currency: 'usd', status: 'paid' } } });
      const t = Math.floor(Date.now() / 1000);
      const signature = `t=${t},v1=${crypto.createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
      arrivals.push(track.expect(id));
      const res = await pool.request({
        path: new URL(receiverUrl).pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'bench/1', 'svc-signature': signature },
        body,
      });
      await res.body.dump();
      if (res.statusCode !== 204) throw new Error(`baseline: the receiver answered ${res.statusCode}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const last = Math.max(...(await Promise.all(arrivals)));
  const used = process.cpuUsage(cpu);
  await pool.close();
  return { count: N, per_second: Math.round((N / (last - start)) * 1000), concurrency: CONCURRENCY, cpu_us_per_post: Math.round((used.user + used.system) / N) };
}

async function main() {
  const receiver = await startReceiver();
  const rounds = [];
  try {
    // Warm-up, not counted: the receiver's first requests (JIT, connections) would weigh on
    // whichever phase comes first.
    await baseline(receiver.url, receiver.track, 'warmup');
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? ['baseline', 'service'] : ['service', 'baseline'];
      const round = { order: order.join(' then '), load_average: os.loadavg().map((l) => Number(l.toFixed(2))) };
      for (const phase of order) {
        if (phase === 'baseline') round.baseline = await baseline(receiver.url, receiver.track, r);
        else Object.assign(round, await service(receiver.url, receiver.track, r));
      }
      round.ratio = Number((round.backlog.per_second / round.baseline.per_second).toFixed(3));
      rounds.push(round);
      if (!json) {
        process.stdout.write(
          `round ${r + 1} (${round.order}; load ${round.load_average.join(' ')}): backlog ${round.backlog.per_second}/s ` +
            `(fanned out after ${round.backlog.fanned_out_ms} ms, appends ${round.backlog.append_per_second}/s, ${round.backlog.cpu_us_per_delivery} µs CPU each, ${round.backlog.statements} statements + ${round.backlog.transactions} transactions), ` +
            `baseline ${round.baseline.per_second}/s (${round.baseline.cpu_us_per_post} µs CPU each), ` +
            `ratio ${round.ratio}; paced ${round.paced.offered_rate}/s p50 ${round.paced.p50_ms} ms p99 ${round.paced.p99_ms} ms ` +
            `(p50 event->queued ${round.paced.fan_out_p50_ms} ms, queued->sent ${round.paced.queued_p50_ms} ms)\n`,
        );
      }
    }
  } finally {
    receiver.stop();
  }
  const result = {
    benchmark: 'webhooks',
    events: N,
    rounds: ROUNDS,
    database: process.env.DATABASE_URL ? 'postgres' : 'pglite',
    worker_concurrency: DELIVERY_CONCURRENCY ?? 16,
    baseline_concurrency: CONCURRENCY,
    median: {
      backlog_per_second: median(rounds.map((r) => r.backlog.per_second)),
      baseline_per_second: median(rounds.map((r) => r.baseline.per_second)),
      ratio: median(rounds.map((r) => r.ratio)),
      paced_p50_ms: median(rounds.map((r) => r.paced.p50_ms)),
      paced_p99_ms: median(rounds.map((r) => r.paced.p99_ms)),
    },
    duplicates: receiver.track.duplicates,
    per_round: rounds,
  };
  if (json) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return;
  }
  const m = result.median;
  process.stdout.write(
    `webhooks (${N} events, ${result.database}; sends in flight: worker ${result.worker_concurrency}, baseline ${CONCURRENCY}), medians of ${ROUNDS} rounds\n` +
      `  service backlog : ${m.backlog_per_second} deliveries/s\n` +
      `  baseline        : ${m.baseline_per_second} signed POSTs/s\n` +
      `  ratio           : ${m.ratio} (median of the rounds' ratios)\n` +
      `  paced ${RATE}/s   : append->receipt p50 ${m.paced_p50_ms} ms, p99 ${m.paced_p99_ms} ms\n` +
      `  duplicates      : ${result.duplicates}\n`,
  );
}

main().catch((error) => {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
});
