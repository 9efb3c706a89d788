/**
 * The start-up bench/me.js and bench/idempotency.js share: their settings from the
 * environment, a scratch database on the Postgres server (created, then dropped whatever
 * happens), an API key made in it, and the way each prints its result and fails.
 */
const { Client } = require('pg');
const { dbUrl, makeKey } = require('./harness');

/** BENCH_SECONDS (default 10), BENCH_ROUNDS (3), --json, DATABASE_URL (the local server by default). */
function benchSettings() {
  return {
    seconds: Number(process.env.BENCH_SECONDS || 10),
    rounds: Number(process.env.BENCH_ROUNDS || 3),
    json: process.argv.includes('--json'),
    serverUrl: process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
  };
}

/**
 * Runs `fn(url, key)` on a scratch database of the server at `serverUrl`, holding an account
 * and a test-mode key (made through the service, whose read models then hold it); the
 * database is dropped afterwards, even when `fn` fails.
 */
async function withScratchDatabase(serverUrl, fn) {
  const name = `bench_${Date.now().toString(36)}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  try {
    const url = dbUrl(serverUrl, name);
    return await fn(url, await makeKey(url));
  } finally {
    await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
    await admin.end();
  }
}

/** Prints `result` as one JSON line with --json, else `text(result)`. */
function report(json, result, text) {
  process.stdout.write(json ? `${JSON.stringify(result)}\n` : text(result));
}

/** Runs a bench's main; a failure is printed and exits 1 (npm run bench counts it). */
function runBench(main) {
  main().catch((error) => {
    process.stderr.write(`${error.stack ?? error}\n`);
    process.exit(1);
  });
}

module.exports = { benchSettings, report, runBench, withScratchDatabase };
