#!/usr/bin/env node
/**
 * GET /v1/me through the full stack (Nest on Fastify, guard, kept key and account, credits
 * read model, error filter, request ids, the request log) against a baseline: a bare
 * Fastify route doing the same work: the key kept in a Map after its first read and the
 * same constant-time hash comparison, the account kept likewise, and the same credits
 * query on the same kind of pool. Both run against one Postgres server in the same run;
 * the ratio is what the framework costs.
 *
 * The service runs as its own process, as `npm start` runs it (workers on) and as an API
 * replica (WORKERS=false); the baseline in this process, autocannon in a third; order
 * alternated by round, medians of BENCH_ROUNDS (3).
 * Runs on the built code: node bench/me.js [--json]
 * BENCH_OTHER_NODE=/path/to/node adds the service (workers on) on that Node binary to every round,
 * so two Node versions are compared in one run (issue 43: Node 24 against 20; `npm exec
 * --package=node@24 -- which node` prints one).
 * DATABASE_URL names the server (default postgres://postgres@127.0.0.1:5432/postgres); the
 * bench creates and drops its own scratch database there. BENCH_SECONDS (default 10).
 */
const fastify = require('fastify');
const { Pool } = require('pg');
const { parseApiKey, secretMatches } = require('../dist/src/accounts/api-key-secret');
const { load, median, serveService } = require('./harness');
const { benchSettings, report, runBench, withScratchDatabase } = require('./support');

const { seconds: SECONDS, rounds: ROUNDS, json, serverUrl } = benchSettings();
const CONNECTIONS = 50;

/** The baseline, in this process: the service's work per request, with no framework. */
async function bareServer(url) {
  const pool = new Pool({ connectionString: url, max: 10 });
  pool.on('error', () => {}); // an idle client cut by the DROP DATABASE at the end is no failure
  const keys = new Map();
  const accounts = new Map();
  const bare = fastify();
  bare.get('/v1/me', async (request) => {
    const parsed = parseApiKey(String(request.headers.authorization).slice('Bearer '.length));
    let found = (keys.get(parsed.lookupId) ?? []).find((k) => secretMatches(parsed.secret, k.secret_hash));
    if (!found) {
      const { rows } = await pool.query('SELECT * FROM api_keys WHERE lookup_id = $1', [parsed.lookupId]);
      keys.set(parsed.lookupId, rows);
      found = rows.find((k) => secretMatches(parsed.secret, k.secret_hash));
    }
    let account = accounts.get(found.account_id);
    if (!account) {
      account = (await pool.query('SELECT * FROM accounts WHERE id = $1 OR slug = $1 LIMIT 1', [found.account_id])).rows[0];
      accounts.set(found.account_id, account);
    }
    const credits = await pool.query('SELECT credits FROM credit_balances WHERE account_id = $1 AND mode = $2', [found.account_id, found.mode]);
    return { ...account, key: { mode: found.mode, scopes: found.scopes }, credits: credits.rows[0]?.credits ?? 0 };
  });
  await bare.listen({ port: 0, host: '127.0.0.1' });
  return { base: `http://127.0.0.1:${bare.server.address().port}`, stop: () => bare.close().then(() => pool.end()) };
}

async function main() {
  const otherNode = process.env.BENCH_OTHER_NODE;
  const rps = { workers: [], replica: [], baseline: [], other_node: [] };
  await withScratchDatabase(serverUrl, async (url, key) => {
    const bare = await bareServer(url);
    const ready = async (b) => (await fetch(`${b}/v1/me`, { headers: { authorization: `Bearer ${key}` } })).ok;
    // Each service process runs only while it is measured: the workers are quiet during the others.
    const measure = {
      workers: () => measured(serveService(url, { workers: true }, ready)),
      replica: () => measured(serveService(url, { workers: false }, ready)),
      baseline: () => run(bare.base),
      ...(otherNode && { other_node: () => measured(serveService(url, { workers: true, node: otherNode }, ready)) }),
    };
    const run = async (base) => {
      await load(`${base}/v1/me`, { key, connections: CONNECTIONS, seconds: 2 }); // warm-up
      return (await load(`${base}/v1/me`, { key, connections: CONNECTIONS, seconds: SECONDS })).rps;
    };
    const measured = async (starting) => {
      const service = await starting;
      try {
        return await run(service.base);
      } finally {
        await service.stop();
      }
    };
    try {
      const who = Object.keys(measure);
      for (let round = 0; round < ROUNDS; round++) {
        // Rotated each round: each takes each place in the order.
        for (let i = 0; i < who.length; i++) {
          const name = who[(i + round) % who.length];
          rps[name].push(await measure[name]());
        }
      }
    } finally {
      await bare.stop();
    }
  });
  const baseline = median(rps.baseline);
  const result = {
    workers_req_per_s: Math.round(median(rps.workers)),
    replica_req_per_s: Math.round(median(rps.replica)),
    baseline_req_per_s: Math.round(baseline),
    ratio_workers: Number((median(rps.workers) / baseline).toFixed(2)),
    ratio_replica: Number((median(rps.replica) / baseline).toFixed(2)),
    ...(otherNode && {
      other_node: otherNodeVersion(otherNode),
      other_node_req_per_s: Math.round(median(rps.other_node)),
      ratio_other_node: Number((median(rps.other_node) / baseline).toFixed(2)),
      other_node_against_this: Number((median(rps.other_node) / median(rps.workers)).toFixed(2)),
    }),
  };
  report(
    json,
    result,
    (r) =>
      `GET /v1/me, ${SECONDS}s x ${ROUNDS} rounds (order rotated, medians), ${CONNECTIONS} connections, Postgres server\n` +
      `  full stack as npm start runs it (workers on): ${r.workers_req_per_s} req/s, ratio ${r.ratio_workers} (goal >= 0.9)\n` +
      `  full stack, API replica (WORKERS=false):      ${r.replica_req_per_s} req/s, ratio ${r.ratio_replica}\n` +
      `  baseline (bare Fastify, the same work):       ${r.baseline_req_per_s} req/s\n` +
      (otherNode
        ? `  full stack on ${r.other_node} (workers on):   ${r.other_node_req_per_s} req/s, ratio ${r.ratio_other_node}; ` +
          `${r.other_node_against_this}x the service on ${process.version}\n`
        : ''),
  );
}

function otherNodeVersion(node) {
  return require('node:child_process').execFileSync(node, ['--version']).toString().trim();
}

runBench(main);
