#!/usr/bin/env node
/**
 * Webhook delivery throughput and latency, next to a baseline.
 *
 * Service, burst: N domain events appended by 8 concurrent appenders; the fan-out
 * subscriber queues one delivery each and the delivery worker POSTs them, signed, to a
 * receiver on 127.0.0.1. Reports deliveries per second (first append to last receipt) and
 * p50/p99 time from append to receipt (under a burst, mostly queueing).
 * Service, paced: events appended at a steady rate the service sustains; p50/p99 time from
 * append to receipt is then the pipeline's own latency.
 * Baseline: N signed POSTs sent by a plain loop (same concurrency as the worker, keep-alive)
 * to the same receiver: the cost of the HTTP and HMAC work alone.
 *
 * Runs on the built code (npm run build): node bench/webhooks.js [--json]
 * BENCH_WEBHOOK_EVENTS (default 1000), BENCH_WEBHOOK_RATE (paced phase, default 20/s);
 * DATABASE_URL to run on a Postgres server (use a scratch database: the run leaves its
 * tables and events there).
 */
require('reflect-metadata');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { createApp } = require('../dist/src/app');
const { loadSettings } = require('../dist/src/config/settings');
const { DATABASE } = require('../dist/src/database/database');
const { EVENT_STORE } = require('../dist/src/event-store/event-store');

const N = Number(process.env.BENCH_WEBHOOK_EVENTS || 1000);
const RATE = Number(process.env.BENCH_WEBHOOK_RATE || 20);
const PACED = Math.min(N, RATE * 5);
const CONCURRENCY = 16; // the delivery worker's
const APPENDERS = 8;
const json = process.argv.includes('--json');

function summary(latencies, elapsedMs) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (p) => Number(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))].toFixed(2));
  return { count: latencies.length, per_second: Math.round((latencies.length / elapsedMs) * 1000), p50_ms: at(50), p99_ms: at(99) };
}

/** The receiver resolves the waiter of each event id it sees; a second sighting is a duplicate. */
function tracker() {
  const waiting = new Map();
  const seen = new Set();
  return {
    duplicates: 0,
    expect(id) {
      return new Promise((resolve) => waiting.set(id, resolve));
    },
    arrived(id) {
      if (seen.has(id)) this.duplicates++;
      seen.add(id);
      waiting.get(id)?.(performance.now());
      waiting.delete(id);
    },
  };
}

async function startReceiver(track) {
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      track.arrived(JSON.parse(Buffer.concat(chunks).toString('utf8')).id);
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 30000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function service(receiverUrl, track) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
  const settings = loadSettings({ ...process.env, DATA_DIR: dataDir, ADMIN_TOKEN: 'bench', WEBHOOK_RETRY_SCHEDULE: '0,1,5' });
  const app = await createApp(settings, { logger: ['error'] });
  try {
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

    const emit = async (i) => {
      const id = crypto.randomUUID();
      const arrival = track.expect(`evt_${id.replace(/-/g, '')}`);
      const sent = performance.now();
      const hex = id.replace(/-/g, '');
      const now = new Date().toISOString();
      // A PayoutPaid as the ledger records it (full shape, on the account's ledger stream), so the
      // ledger projection applies it instead of failing and retrying on every append.
      const data = {
        payout: { id: `po_${hex}`, object: 'payout', amount_cents: 100 + i, currency: 'usd', status: 'paid', created_at: now, arrival_date: now },
        account_id: account.id,
        mode: 'test',
        transaction_id: `txn_${hex}`,
        description: 'Payout',
      };
      await store.append(`ledger-test-${account.id}`, [{ id, type: 'PayoutPaid', data }], 'any');
      // Wrapped so awaiting the append does not also await the arrival.
      return { latency: arrival.then((t) => t - sent) };
    };

    // Burst: several appenders, as several API instances would be.
    const start = performance.now();
    const arrivals = [];
    let next = 0;
    const appender = async () => {
      while (next < N) arrivals.push((await emit(next++)).latency);
    };
    await Promise.all(Array.from({ length: APPENDERS }, appender));
    const appendMs = performance.now() - start;
    const burstLatencies = await Promise.all(arrivals);
    const burst = { ...summary(burstLatencies, performance.now() - start), append_per_second: Math.round((N / appendMs) * 1000) };

    // Where the burst's time went: event -> delivery queued (fan-out), queued -> first attempt (worker).
    const { rows } = await app.get(DATABASE).query(
      `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM d.created_at - e.created_at)) * 1000 AS fan_out,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM a.started_at - d.created_at)) * 1000 AS queued
         FROM webhook_deliveries d JOIN events e ON e.event_id = d.event_id
         JOIN webhook_delivery_attempts a ON a.delivery_id = d.id AND a.attempt = 1`,
    );
    burst.fan_out_p50_ms = Math.round(Number(rows[0].fan_out));
    burst.queued_p50_ms = Math.round(Number(rows[0].queued));

    // Paced: one event every 1/RATE s.
    const pacedStart = performance.now();
    const paced = [];
    for (let i = 0; i < PACED; i++) {
      paced.push((await emit(N + i)).latency);
      await sleep(Math.max(0, pacedStart + ((i + 1) * 1000) / RATE - performance.now()));
    }
    const pacedSummary = { ...summary(await Promise.all(paced), performance.now() - pacedStart), rate: RATE };
    delete pacedSummary.per_second;
    return { burst, paced: pacedSummary, duplicates: track.duplicates };
  } finally {
    await app.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function baseline(receiverUrl, track) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const secret = `whsec_test_${crypto.randomBytes(16).toString('hex')}`;
  const latencies = [];
  let next = 0;
  const start = performance.now();
  const worker = async () => {
    while (next < N) {
      const i = next++;
      const id = `evt_base${i}`;
      const body = JSON.stringify({ id, type: 'payout.paid', created: Math.floor(Date.now() / 1000), data: { payout: { id: `po_${i}` } } });
      const t = Math.floor(Date.now() / 1000);
      const signature = `t=${t},v1=${crypto.createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
      const arrival = track.expect(id);
      const sent = performance.now();
      await new Promise((resolve, reject) => {
        const req = http.request(receiverUrl, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'svc-signature': signature, 'content-length': Buffer.byteLength(body) } }, (res) => {
          res.resume();
          res.on('end', resolve);
        });
        req.on('error', reject);
        req.end(body);
      });
      latencies.push((await arrival) - sent);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const result = summary(latencies, performance.now() - start);
  agent.destroy();
  return result;
}

async function main() {
  const track = tracker();
  const server = await startReceiver(track);
  const url = `http://127.0.0.1:${server.address().port}/hooks`;
  try {
    const base = await baseline(url, track);
    const svc = await service(url, track);
    const result = {
      benchmark: 'webhooks',
      events: N,
      database: process.env.DATABASE_URL ? 'postgres' : 'pglite',
      service: svc,
      baseline: base,
      ratio_per_second: Number((svc.burst.per_second / base.per_second).toFixed(3)),
    };
    if (json) {
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      return;
    }
    const { burst, paced } = svc;
    process.stdout.write(
      `webhooks (${N} events, ${result.database})\n` +
        `  service burst : ${burst.per_second} deliveries/s, append->receipt p50 ${burst.p50_ms} ms, p99 ${burst.p99_ms} ms` +
        ` (appends ${burst.append_per_second}/s; p50 event->queued ${burst.fan_out_p50_ms} ms, queued->sent ${burst.queued_p50_ms} ms)\n` +
        `  service paced : ${paced.count} events at ${paced.rate}/s, append->receipt p50 ${paced.p50_ms} ms, p99 ${paced.p99_ms} ms\n` +
        `  baseline      : ${base.per_second} signed POSTs/s, send->receipt p50 ${base.p50_ms} ms, p99 ${base.p99_ms} ms\n` +
        `  ratio         : ${result.ratio_per_second} of the baseline rate; duplicates ${svc.duplicates}\n`,
    );
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
});
