#!/usr/bin/env node
/**
 * POST /v1/datasets with and without an Idempotency-Key, in the same run against the same
 * service (issue 39: the key may cost at most 10% of the throughput and one statement). Every
 * request drafts a new dataset under a new title, and every keyed request sends a new key, so
 * each one runs (none is a replay): the difference is what taking the key and keeping the
 * answer cost.
 *
 * The service runs as its own process, as `npm start` runs it (workers on); autocannon runs
 * in a third process (this file again, with --load); order alternated by round, medians of
 * BENCH_ROUNDS (3), after BENCH_WARM_SECONDS (5) of each. Beside the rates, figures that do not move with the machine's load: the
 * transactions committed in the bench's database per request (pg_stat_database, so every
 * statement run outside a transaction, the workers' too) and the service process's CPU time
 * per request (/proc). Runs on the built code: node bench/idempotency.js [--json]
 * DATABASE_URL names the server (default postgres://postgres@127.0.0.1:5432/postgres); the
 * bench creates and drops its own scratch database there. BENCH_SECONDS (default 10).
 */
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const { Client } = require('pg');
const { ADMIN, median, serveService } = require('./harness');
const { benchSettings, report, runBench, withScratchDatabase } = require('./support');

const { seconds: SECONDS, rounds: ROUNDS, json, serverUrl } = benchSettings();
const CONNECTIONS = 20;
const WARM_SECONDS = Number(process.env.BENCH_WARM_SECONDS || 5);

/** In the load process: autocannon with a new title (and, keyed, a new key) on every request. */
function loadProcess([url, key, keyed, seconds, tag]) {
  const autocannon = require('autocannon');
  let n = 0;
  const instance = autocannon(
    {
      url,
      method: 'POST',
      connections: CONNECTIONS,
      duration: Number(seconds),
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      requests: [
        {
          setupRequest: (request) => {
            n++;
            const headers = { ...request.headers, ...(keyed === 'true' ? { 'idempotency-key': `${tag}-${n}` } : {}) };
            return { ...request, headers, body: JSON.stringify({ title: `Bench ${tag} ${n}`, type: 'dataset', price_cents: 0 }) };
          },
        },
      ],
    },
    (error, r) => {
      if (error) throw error;
      process.stdout.write(JSON.stringify({ rps: r.requests.average, total: r.requests.total, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors }));
    },
  );
  instance.on('error', (error) => {
    throw error;
  });
}

function load(base, key, keyed, seconds, tag) {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, [__filename, '--load', `${base}/v1/datasets`, key, String(keyed), String(seconds), tag], { maxBuffer: 64 << 20 }, (error, stdout) => {
      if (error) return reject(error);
      const r = JSON.parse(stdout);
      if (r.non2xx || r.errors) return reject(new Error(`${keyed ? 'keyed' : 'unkeyed'}: ${r.non2xx} non-2xx and ${r.errors} errors`));
      resolve(r);
    }),
  );
}

/** Statements on idempotency_keys so far (GET /metrics; 0 for a build without the counter). */
async function keyStatements(base) {
  const text = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
  return [...text.matchAll(/^svc_idempotency_statements_total\{kind="\w+"\} (\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
}

/** CPU seconds (user + system) process `pid` has used so far. */
function cpuSeconds(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (100 a second on Linux)
}

async function main() {
  const runs = { unkeyed: [], keyed: [] };
  let keysKept;
  await withScratchDatabase(serverUrl, async (url, key) => {
    const db = new Client({ connectionString: url });
    await db.connect();
    // Counters are published by each backend at most once a second: wait that long before reading.
    const commits = async () => {
      await new Promise((r) => setTimeout(r, 1500));
      return Number((await db.query('SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()')).rows[0].xact_commit);
    };
    try {
      const service = await serveService(url, { workers: true });
      try {
        // Both paths warmed (the first rounds of a run were up to half as fast as the last with 2 s of one).
        await load(service.base, key, false, WARM_SECONDS, 'warmunkeyed');
        await load(service.base, key, true, WARM_SECONDS, 'warmkeyed');
        for (let round = 0; round < ROUNDS; round++) {
          const order = round % 2 ? ['keyed', 'unkeyed'] : ['unkeyed', 'keyed'];
          for (const which of order) {
            const before = { commits: await commits(), cpu: cpuSeconds(service.pid), statements: await keyStatements(service.base) };
            const r = await load(service.base, key, which === 'keyed', SECONDS, `${which}${round}`);
            const cpu = cpuSeconds(service.pid) - before.cpu;
            const statements = (await keyStatements(service.base)) - before.statements;
            const committed = (await commits()) - before.commits - 1; // this reading's own
            runs[which].push({
              ...r,
              key_statements_per_request: Number((statements / r.total).toFixed(3)),
              commits_per_request: Number((committed / r.total).toFixed(2)),
              service_cpu_ms_per_request: Number(((cpu * 1000) / r.total).toFixed(3)),
            });
          }
        }
      } finally {
        await service.stop();
      }
      keysKept = Number((await db.query('SELECT count(*) AS n FROM idempotency_keys')).rows[0].n);
    } finally {
      await db.end();
    }
  });
  const pick = (which, field) => median(runs[which].map((r) => r[field]));
  const result = {
    unkeyed_req_per_s: Math.round(pick('unkeyed', 'rps')),
    keyed_req_per_s: Math.round(pick('keyed', 'rps')),
    ratio: Number((pick('keyed', 'rps') / pick('unkeyed', 'rps')).toFixed(3)),
    // Each round's keyed rate over the unkeyed rate measured next to it: less moved by drift over the run.
    ratio_of_rounds: Number(median(runs.keyed.map((k, i) => k.rps / runs.unkeyed[i].rps)).toFixed(3)),
    unkeyed_p50_ms: pick('unkeyed', 'p50'),
    keyed_p50_ms: pick('keyed', 'p50'),
    unkeyed_p99_ms: pick('unkeyed', 'p99'),
    keyed_p99_ms: pick('keyed', 'p99'),
    keyed_key_statements_per_request: pick('keyed', 'key_statements_per_request'),
    unkeyed_commits_per_request: pick('unkeyed', 'commits_per_request'),
    keyed_commits_per_request: pick('keyed', 'commits_per_request'),
    unkeyed_service_cpu_ms_per_request: pick('unkeyed', 'service_cpu_ms_per_request'),
    keyed_service_cpu_ms_per_request: pick('keyed', 'service_cpu_ms_per_request'),
    keys_kept: keysKept,
    rounds: runs,
  };
  report(
    json,
    result,
    (r) =>
      `POST /v1/datasets, ${SECONDS}s x ${ROUNDS} rounds (order alternated, medians), ${CONNECTIONS} connections, workers on, Postgres server\n` +
      `  without Idempotency-Key: ${r.unkeyed_req_per_s} req/s (p50 ${r.unkeyed_p50_ms} ms, p99 ${r.unkeyed_p99_ms} ms), ` +
      `${r.unkeyed_commits_per_request} commits and ${r.unkeyed_service_cpu_ms_per_request} ms of service CPU a request\n` +
      `  with a new key each:     ${r.keyed_req_per_s} req/s (p50 ${r.keyed_p50_ms} ms, p99 ${r.keyed_p99_ms} ms), ` +
      `${r.keyed_commits_per_request} commits and ${r.keyed_service_cpu_ms_per_request} ms of service CPU a request\n` +
      `  ratio ${r.ratio} (goal >= 0.9), median of the rounds' own ratios ${r.ratio_of_rounds}; statements on idempotency_keys a keyed request: ${r.keyed_key_statements_per_request} (goal <= 1; ` +
      `commits a request ${(r.keyed_commits_per_request - r.unkeyed_commits_per_request).toFixed(2)} more than unkeyed); ${r.keys_kept} keys kept\n` +
      `  rounds (req/s): unkeyed ${runs.unkeyed.map((x) => Math.round(x.rps)).join(', ')}; keyed ${runs.keyed.map((x) => Math.round(x.rps)).join(', ')}\n`,
  );
}

if (process.argv[2] === '--load') loadProcess(process.argv.slice(3));
else runBench(main);
