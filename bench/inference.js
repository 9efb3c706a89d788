#!/usr/bin/env node
/**
 * What the inference gateway adds to a streamed chat completion: time to first token (TTFT),
 * total time and throughput through the gateway (live mode, metered, on a Postgres server)
 * vs the same OpenAI-compatible upstream called directly, at c=1 and c=50, in one run.
 *
 * Three processes: the upstream stand-in (bench/openai-upstream.js: TOKENS chunks, DELAY_MS
 * before each, as an engine generating ~1000/DELAY_MS tokens per second), the service
 * (dist/src/main.js; npm run build first) and this load generator. Direct and gateway
 * alternate their order round by round; the figures are medians over ROUNDS rounds.
 *
 *   BENCH_ROUNDS=5 node bench/inference.js [--json]
 */
const { execSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { Client } = require('pg');
const { freePort, waitFor, startService } = require('./harness');

const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const TOKENS = 16;
const DELAY_MS = 2;
const PHASES = [
  { concurrency: 1, requests: 150 },
  { concurrency: 50, requests: 1500 },
];
const WARM_UP = 100;
const ADMIN = 'bench-admin-token';
const json = process.argv.includes('--json');
const serverUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

async function startUpstream() {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(__dirname, 'openai-upstream.js'), String(port), String(TOKENS), String(DELAY_MS)], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}/v1`;
  await waitFor(`${url}/chat/completions`, (s) => s === 404);
  return { url, child };
}


async function call(base, method, route, { key = ADMIN, body, form } = {}) {
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
  try {
    return { status: res.status, body: JSON.parse(text) };
  } catch {
    return { status: res.status, body: text };
  }
}

/** A live premium key, activated through its sandbox checkout. */
async function liveKey(base) {
  const account = await call(base, 'POST', '/admin/accounts', { body: { name: 'Bench Inference', email: 'inference@example.com' } });
  const key = await call(base, 'POST', '/admin/keys', { body: { account: account.body.id, mode: 'live', tier: 'premium' } });
  const paid = await call(base, 'POST', key.body.activation_checkout_url, { form: 'card_number=4242424242424242' });
  if (paid.status !== 200) throw new Error(`activation: ${paid.status}`);
  return key.body.key;
}

// Idle sockets are dropped after 2 s, before a server's keep-alive timeout (Node's default, 5 s,
// in the upstream stand-in) closes them: reusing one just as the server closes it fails the
// request with "socket hang up", which once stopped a whole npm run bench.
const agent = new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 2000 });

/** One streamed completion; times to the first content chunk and to [DONE]. */
function streamOnce(url, key, i) {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ model: 'svc-fast-8b', messages: [{ role: 'user', content: `Plan grasp ${i}` }], stream: true, stream_options: { include_usage: true } });
    const start = performance.now();
    let first;
    let text = '';
    const req = http.request(url, { method: 'POST', agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return reject(new Error(`status ${res.statusCode}`));
      }
      res.setEncoding('utf8');
      res.on('data', (data) => {
        if (first === undefined && data.includes('"content":"')) first = performance.now() - start;
        text += data;
      });
      res.on('end', () => {
        if (!text.endsWith('data: [DONE]\n\n')) return reject(new Error('stream did not end with [DONE]'));
        resolve({ ttft: first, total: performance.now() - start });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** CPU time (ms) a process has used, from /proc (Linux); 0 elsewhere. */
function cpuMs(pid) {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, in 100 Hz ticks
  } catch {
    return 0;
  }
}
const postgresCpuMs = () =>
  execSync('pgrep -x postgres || true').toString().split('\n').filter(Boolean).reduce((n, pid) => n + cpuMs(pid), 0);

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
const median = (values) => quantile(values, 0.5);

async function phase(url, key, { concurrency, requests }, pids = {}) {
  const cpuBefore = { service: cpuMs(pids.service), upstream: cpuMs(pids.upstream), postgres: postgresCpuMs(), load: process.cpuUsage() };
  const ttft = [];
  const total = [];
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests) {
        const r = await streamOnce(url, key, next++);
        ttft.push(r.ttft);
        total.push(r.total);
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const load = process.cpuUsage(cpuBefore.load);
  // CPU milliseconds per request, by process: where a request's cost goes on these two cores.
  const cpu = {
    service: (cpuMs(pids.service) - cpuBefore.service) / requests,
    upstream: (cpuMs(pids.upstream) - cpuBefore.upstream) / requests,
    postgres: (postgresCpuMs() - cpuBefore.postgres) / requests,
    load_generator: (load.user + load.system) / 1000 / requests,
  };
  return { ttftP50: quantile(ttft, 0.5), ttftP99: quantile(ttft, 0.99), totalP50: quantile(total, 0.5), perSecond: requests / seconds, cpu };
}

async function main() {
  const db = `bench_inference_${Date.now()}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${db}`);
  const dbUrl = new URL(serverUrl);
  dbUrl.pathname = `/${db}`;
  const upstream = await startUpstream();
  const service = await startService({ DATABASE_URL: dbUrl.toString(), INFERENCE_UPSTREAM_URL: upstream.url }, ADMIN);
  try {
    const key = await liveKey(service.base);
    const targets = { direct: { url: `${upstream.url}/chat/completions`, key: 'unused' }, gateway: { url: `${service.base}/v1/chat/completions`, key } };
    for (const t of Object.values(targets)) await phase(t.url, t.key, { concurrency: 4, requests: WARM_UP });

    const samples = {};
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 ? ['gateway', 'direct'] : ['direct', 'gateway'];
      for (const p of PHASES) {
        for (const name of order) {
          const r = await phase(targets[name].url, targets[name].key, p, { service: service.child.pid, upstream: upstream.child.pid });
          ((samples[`c${p.concurrency}`] ??= {})[name] ??= []).push(r);
        }
      }
    }
    const results = PHASES.map((p) => {
      const s = samples[`c${p.concurrency}`];
      const med = (name, field) => median(s[name].map((r) => r[field]));
      const rounds = s.direct.map((d, i) => ({ d, g: s.gateway[i] }));
      return {
        concurrency: p.concurrency,
        direct: { ttft_p50_ms: med('direct', 'ttftP50'), ttft_p99_ms: med('direct', 'ttftP99'), total_p50_ms: med('direct', 'totalP50'), per_second: med('direct', 'perSecond') },
        gateway: { ttft_p50_ms: med('gateway', 'ttftP50'), ttft_p99_ms: med('gateway', 'ttftP99'), total_p50_ms: med('gateway', 'totalP50'), per_second: med('gateway', 'perSecond') },
        // Per round, gateway minus (or over) the direct run next to it; then the median of the rounds.
        added_ttft_p50_ms: median(rounds.map(({ d, g }) => g.ttftP50 - d.ttftP50)),
        added_ttft_p99_ms: median(rounds.map(({ d, g }) => g.ttftP99 - d.ttftP99)),
        throughput_ratio: median(rounds.map(({ d, g }) => g.perSecond / d.perSecond)),
        cpu_ms_per_request: Object.fromEntries(
          ['direct', 'gateway'].map((name) => [name, Object.fromEntries(Object.keys(s[name][0].cpu).map((proc) => [proc, median(s[name].map((r) => r.cpu[proc]))]))]),
        ),
      };
    });
    if (json) {
      process.stdout.write(`${JSON.stringify({ rounds: ROUNDS, tokens: TOKENS, delay_ms: DELAY_MS, results })}\n`);
    } else {
      process.stdout.write(`streamed completions of ${TOKENS} chunks, ${DELAY_MS} ms apart; medians of ${ROUNDS} rounds\n`);
      for (const r of results) {
        const f = (x) => x.toFixed(2);
        process.stdout.write(
          `  c=${r.concurrency}: TTFT p50 direct ${f(r.direct.ttft_p50_ms)} ms, gateway ${f(r.gateway.ttft_p50_ms)} ms (added ${f(r.added_ttft_p50_ms)} ms); ` +
            `p99 added ${f(r.added_ttft_p99_ms)} ms; total p50 ${f(r.direct.total_p50_ms)} / ${f(r.gateway.total_p50_ms)} ms; ` +
            `throughput ${f(r.direct.per_second)} / ${f(r.gateway.per_second)} per s (ratio ${f(r.throughput_ratio)})\n`,
        );
        for (const [name, cpu] of Object.entries(r.cpu_ms_per_request)) {
          process.stdout.write(`       CPU ms per request, ${name}: ${Object.entries(cpu).map(([p, v]) => `${p} ${f(v)}`).join(', ')}\n`);
        }
      }
    }
  } finally {
    service.child.kill('SIGTERM');
    upstream.child.kill('SIGTERM');
    await new Promise((r) => service.child.once('exit', r));
    await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    await admin.end();
    agent.destroy();
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
});
