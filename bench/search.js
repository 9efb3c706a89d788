#!/usr/bin/env node
/**
 * Catalog search (issue 14): GET /v1/models?q= for a common word ("gripper", 15% of
 * listings) and a rare one ("hexapod", 0.05%) on a seeded catalog (default 100,000
 * listings, bench/seed.js, through the event store), at 50 connections.
 *   service:  dist/src/main.js with WORKERS=false (no projections or subscribers running),
 *   baseline: bench/search-baseline.js, a bare Fastify route running the same SQL on a pool
 *             of the same size,
 * each its own process, and autocannon in a third. Each round measures both for each word,
 * order alternated by round; figures are medians of BENCH_ROUNDS (3) rounds. Each round also
 * measures GET /v1/me on the same service at the same concurrency (first in even rounds, last
 * in odd ones): the cheapest authenticated request of the stack (two indexed lookups), a
 * floor under any search's latency on this machine.
 *   node bench/search.js [--json]     (npm run build first)
 * DATABASE_URL names the Postgres server (default the local one); the bench makes and drops
 * its own database there, unless BENCH_SEARCH_DB names an already seeded one to reuse.
 * BENCH_LISTINGS (100000), BENCH_SECONDS (8), BENCH_ROUNDS (3).
 */
const { execFileSync } = require('node:child_process');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('pg');
const { dbUrl, load, makeKey, median, serve, serveService } = require('./harness');

const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const SECONDS = Number(process.env.BENCH_SECONDS || 8);
const LISTINGS = Number(process.env.BENCH_LISTINGS || 100_000);
const CONNECTIONS = 50;
const WORDS = { common: 'gripper', rare: 'hexapod' };
const serverUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const json = process.argv.includes('--json');

async function main() {
  const admin0 = new Client({ connectionString: serverUrl });
  await admin0.connect();
  const name = process.env.BENCH_SEARCH_DB || `bench_search_${Date.now().toString(36)}`;
  const url = dbUrl(serverUrl, name);
  if (!process.env.BENCH_SEARCH_DB) {
    await admin0.query(`CREATE DATABASE ${name}`);
    execFileSync(process.execPath, [path.join(__dirname, 'seed.js'), '--listings', String(LISTINGS)], { env: { ...process.env, DATABASE_URL: url }, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  const key = await makeKey(url);
  // The live build's table (queries read it through a view of the same name).
  const sized = new Client({ connectionString: url });
  await sized.connect();
  const { rows } = await sized.query(
    `SELECT pg_size_pretty(sum(pg_total_relation_size(oid))) AS size FROM pg_class WHERE relname = 'catalog_listings' AND relkind = 'r'`,
  );
  await sized.end();
  const service = await serveService(url, { workers: false }, async (b) => (await fetch(`${b}/v1/models?limit=1`, { headers: { authorization: `Bearer ${key}` } })).ok);
  const baseline = await serve(path.join(__dirname, 'search-baseline.js'), { DATABASE_URL: url }, async (b) => (await fetch(`${b}/v1/models?q=x`)).ok);
  const figures = {};
  try {
    for (const [word, q] of Object.entries(WORDS)) {
      // Warm-up: plans cached, pages in shared buffers, connections open.
      await load(`${service.base}/v1/models?q=${q}`, { key, connections: CONNECTIONS, seconds: 2 });
      await load(`${baseline.base}/v1/models?q=${q}`, { key, connections: CONNECTIONS, seconds: 2 });
      figures[word] = { service: [], baseline: [] };
    }
    await load(`${service.base}/v1/me`, { key, connections: CONNECTIONS, seconds: 2 });
    figures.floor = [];
    const floor = async () => figures.floor.push(await load(`${service.base}/v1/me`, { key, connections: CONNECTIONS, seconds: SECONDS }));
    for (let round = 0; round < ROUNDS; round++) {
      if (round % 2 === 0) await floor();
      for (const [word, q] of Object.entries(WORDS)) {
        const order = round % 2 === 0 ? ['service', 'baseline'] : ['baseline', 'service'];
        for (const who of order) {
          const base = who === 'service' ? service.base : baseline.base;
          figures[word][who].push(await load(`${base}/v1/models?q=${q}`, { key, connections: CONNECTIONS, seconds: SECONDS }));
        }
      }
      if (round % 2 === 1) await floor();
    }
  } finally {
    await service.stop();
    await baseline.stop();
    if (!process.env.BENCH_SEARCH_DB) await admin0.query(`DROP DATABASE ${name} WITH (FORCE)`);
    await admin0.end();
  }
  const result = { listings: LISTINGS, cores: os.cpus().length, loadavg: os.loadavg()[0].toFixed(2), connections: CONNECTIONS, seconds: SECONDS, rounds: ROUNDS };
  for (const word of Object.keys(WORDS)) {
    const m = (who, k) => median(figures[word][who].map((f) => f[k]));
    result[word] = {};
    for (const k of ['p50', 'p99', 'rps']) {
      const s = m('service', k);
      const b = m('baseline', k);
      result[word][k] = { service: Math.round(s * 10) / 10, baseline: Math.round(b * 10) / 10, ratio: Number((s / b).toFixed(2)) };
    }
  }
  result.floor = Object.fromEntries(['p50', 'p99', 'rps'].map((k) => [k, median(figures.floor.map((f) => f[k]))]));
  if (json) return process.stdout.write(`${JSON.stringify(result)}\n`);
  process.stdout.write(
    `GET /v1/models?q=, ${LISTINGS} listings (${rows[0].size ?? '?'}), c=${CONNECTIONS}, ${SECONDS}s x ${ROUNDS} rounds, ${result.cores} cores, load ${result.loadavg}\n`,
  );
  for (const [word, q] of Object.entries(WORDS)) {
    const r = result[word];
    process.stdout.write(
      `  ${word} "${q}": p50 ${r.p50.service} ms (baseline ${r.p50.baseline}, ratio ${r.p50.ratio}); ` +
        `p99 ${r.p99.service} ms (baseline ${r.p99.baseline}, ratio ${r.p99.ratio}; goal < 25 ms); ` +
        `${r.rps.service} req/s (baseline ${r.rps.baseline}, ratio ${r.rps.ratio})\n`,
    );
  }
  const f = result.floor;
  process.stdout.write(`  floor, GET /v1/me on the same service: p50 ${f.p50} ms, p99 ${f.p99} ms, ${Math.round(f.rps)} req/s\n`);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
