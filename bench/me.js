#!/usr/bin/env node
/**
 * GET /v1/me through the full stack (Nest on Fastify, guard, read model, error filter,
 * request ids) against a baseline: a bare Fastify route that runs the same key-lookup
 * query on the same kind of pool and the same constant-time hash comparison. Both run
 * against one Postgres server in the same run; the ratio is what the framework costs.
 *
 * The service runs as its own process with WORKERS=false (the key is made before, with
 * workers on), the baseline in this process, autocannon in a third; order alternated by
 * round, medians of BENCH_ROUNDS (3).
 * Runs on the built code: node bench/me.js [--json]
 * DATABASE_URL names the server (default postgres://postgres@127.0.0.1:5432/postgres); the
 * bench creates and drops its own scratch database there. BENCH_SECONDS (default 10).
 */
const fastify = require('fastify');
const { Client, Pool } = require('pg');
const { parseApiKey, secretMatches } = require('../dist/src/accounts/api-key-secret');
const { dbUrl, load, makeKey, median, serveService } = require('./harness');

const SECONDS = Number(process.env.BENCH_SECONDS || 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const CONNECTIONS = 32;
const json = process.argv.includes('--json');
const serverUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

/** The baseline, in this process: the same key lookup, hash comparison and account read on a pg.Pool. */
async function bareServer(url) {
  const pool = new Pool({ connectionString: url, max: 10 });
  pool.on('error', () => {}); // an idle client cut by the DROP DATABASE at the end is no failure
  const bare = fastify();
  bare.get('/v1/me', async (request) => {
    const parsed = parseApiKey(String(request.headers.authorization).slice('Bearer '.length));
    const { rows } = await pool.query('SELECT * FROM api_keys WHERE lookup_id = $1', [parsed.lookupId]);
    const found = rows.find((k) => secretMatches(parsed.secret, k.secret_hash));
    const accounts = await pool.query('SELECT * FROM accounts WHERE id = $1 OR slug = $1 LIMIT 1', [found.account_id]);
    return { ...accounts.rows[0], key: { mode: found.mode, scopes: found.scopes } };
  });
  await bare.listen({ port: 0, host: '127.0.0.1' });
  return { base: `http://127.0.0.1:${bare.server.address().port}`, stop: () => bare.close().then(() => pool.end()) };
}

async function main() {
  const name = `bench_${Date.now().toString(36)}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = dbUrl(serverUrl, name);
  const rps = { service: [], baseline: [] };
  try {
    const key = await makeKey(url);
    // Measured with WORKERS=false: no projection or subscriber runs beside either figure.
    const service = await serveService(url, { workers: false }, async (b) => (await fetch(`${b}/v1/me`, { headers: { authorization: `Bearer ${key}` } })).ok);
    const bare = await bareServer(url);
    try {
      const targets = { service: `${service.base}/v1/me`, baseline: `${bare.base}/v1/me` };
      for (const u of Object.values(targets)) await load(u, { key, connections: CONNECTIONS, seconds: 2 });
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? ['service', 'baseline'] : ['baseline', 'service'];
        for (const who of order) rps[who].push((await load(targets[who], { key, connections: CONNECTIONS, seconds: SECONDS })).rps);
      }
    } finally {
      await service.stop();
      await bare.stop();
    }
  } finally {
    await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
    await admin.end();
  }
  const service = median(rps.service);
  const baseline = median(rps.baseline);
  const result = { service_req_per_s: Math.round(service), baseline_req_per_s: Math.round(baseline), ratio: Number((service / baseline).toFixed(2)) };
  if (json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else {
    process.stdout.write(
      `GET /v1/me, ${SECONDS}s x ${ROUNDS} rounds (order alternated, medians), ${CONNECTIONS} connections, Postgres server\n` +
        `  full stack (Nest + guard + read model, WORKERS=false): ${result.service_req_per_s} req/s\n` +
        `  baseline (bare Fastify, same query):                   ${result.baseline_req_per_s} req/s\n` +
        `  ratio service/baseline:                                ${result.ratio}\n`,
    );
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
