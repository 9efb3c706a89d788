#!/usr/bin/env node
/**
 * POST /v1/datasets with and without an Idempotency-Key, in the same run against the same
 * service (issue 39: the key may cost at most 10% of the throughput). Every request drafts a
 * new dataset under a new title, and every keyed request sends a new key, so each one runs
 * (none is a replay): the difference is what taking the key and keeping the answer cost.
 *
 * The service runs as its own process, as `npm start` runs it (workers on); autocannon runs
 * in a third process (this file again, with --load); order alternated by round, medians of
 * BENCH_ROUNDS (3). Runs on the built code: node bench/idempotency.js [--json]
 * DATABASE_URL names the server (default postgres://postgres@127.0.0.1:5432/postgres); the
 * bench creates and drops its own scratch database there. BENCH_SECONDS (default 10).
 */
const { execFile } = require('node:child_process');
const { Client } = require('pg');
const { dbUrl, makeKey, median, serveService } = require('./harness');

const SECONDS = Number(process.env.BENCH_SECONDS || 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const CONNECTIONS = 20;
const json = process.argv.includes('--json');
const serverUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

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
      process.stdout.write(JSON.stringify({ rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors }));
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

async function main() {
  const name = `bench_${Date.now().toString(36)}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = dbUrl(serverUrl, name);
  const runs = { unkeyed: [], keyed: [] };
  let keysKept;
  try {
    const key = await makeKey(url);
    const service = await serveService(url, { workers: true });
    try {
      await load(service.base, key, false, 2, 'warm');
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 ? ['keyed', 'unkeyed'] : ['unkeyed', 'keyed'];
        for (const which of order) runs[which].push(await load(service.base, key, which === 'keyed', SECONDS, `${which}${round}`));
      }
    } finally {
      await service.stop();
    }
    const db = new Client({ connectionString: url });
    await db.connect();
    keysKept = Number((await db.query('SELECT count(*) AS n FROM idempotency_keys')).rows[0].n);
    await db.end();
  } finally {
    await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
    await admin.end();
  }
  const pick = (which, field) => median(runs[which].map((r) => r[field]));
  const result = {
    unkeyed_req_per_s: Math.round(pick('unkeyed', 'rps')),
    keyed_req_per_s: Math.round(pick('keyed', 'rps')),
    ratio: Number((pick('keyed', 'rps') / pick('unkeyed', 'rps')).toFixed(3)),
    unkeyed_p50_ms: pick('unkeyed', 'p50'),
    keyed_p50_ms: pick('keyed', 'p50'),
    unkeyed_p99_ms: pick('unkeyed', 'p99'),
    keyed_p99_ms: pick('keyed', 'p99'),
    keys_kept: keysKept,
    rounds: runs,
  };
  if (json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else {
    process.stdout.write(
      `POST /v1/datasets, ${SECONDS}s x ${ROUNDS} rounds (order alternated, medians), ${CONNECTIONS} connections, workers on, Postgres server\n` +
        `  without Idempotency-Key: ${result.unkeyed_req_per_s} req/s (p50 ${result.unkeyed_p50_ms} ms, p99 ${result.unkeyed_p99_ms} ms)\n` +
        `  with a new key each:     ${result.keyed_req_per_s} req/s (p50 ${result.keyed_p50_ms} ms, p99 ${result.keyed_p99_ms} ms)\n` +
        `  ratio ${result.ratio} (goal >= 0.9); ${result.keys_kept} keys kept\n`,
    );
  }
}

if (process.argv[2] === '--load') loadProcess(process.argv.slice(3));
else
  main().catch((error) => {
    process.stderr.write(`${error.stack ?? error}\n`);
    process.exit(1);
  });
