#!/usr/bin/env node
/**
 * Keys kept in process (issue 27), measured from outside on a Postgres server:
 * - revocation across instances: two service processes on one database (A with the
 *   workers, B an API replica with WORKERS=false, as at scale). B has served the key (so it
 *   keeps it); the key is revoked through A; the time from the revoke's answer to B's first
 *   401 (B polled back to back from this process). BENCH_KEYS keys (default 30): p50, p99, max.
 *   Issue 27's bound: 100 ms.
 * - a burst of unknown keys: BENCH_RANDOM_KEYS (default 10,000) random svc_test_ keys at
 *   c=50 against B, from a load generator in its own process: B's database transactions
 *   per request (pg_stat_database.xact_commit; includes B's idle background, measured over
 *   the same time before) and B's RSS before and after.
 * Runs on the built code: node bench/revocation.js [--json]
 */
const { execFile } = require('node:child_process');
const { Client } = require('pg');
const { admin, dbUrl, startService } = require('./harness');

const KEYS = Number(process.env.BENCH_KEYS || 30);
const RANDOM_KEYS = Number(process.env.BENCH_RANDOM_KEYS || 10_000);
const json = process.argv.includes('--json');
const serverUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

/** The random-key burst, in its own process: every answer must be 401 invalid_key. */
const BURST = `
const { randomBytes } = require('node:crypto');
const [base, total, concurrency] = process.argv.slice(1);
const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const randomKey = () => 'svc_test_' + [...randomBytes(40)].map((b) => alphabet[b % 62]).join('');
let sent = 0, wrong = 0;
async function worker() {
  while (sent < Number(total)) {
    sent++;
    const r = await fetch(base + '/v1/me', { headers: { authorization: 'Bearer ' + randomKey() } });
    const body = await r.json();
    if (r.status !== 401 || body.error.code !== 'invalid_key') wrong++;
  }
}
Promise.all(Array.from({ length: Number(concurrency) }, worker)).then(() => process.stdout.write(JSON.stringify({ sent, wrong })));
`;

function burst(base, total, concurrency) {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, ['-e', BURST, base, String(total), String(concurrency)], { maxBuffer: 1 << 20 }, (error, stdout) => (error ? reject(error) : resolve(JSON.parse(stdout)))),
  );
}

async function rssOf(pid) {
  const status = require('node:fs').readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]) * 1024;
}

async function main() {
  const name = `bench_${Date.now().toString(36)}`;
  const root = new Client({ connectionString: serverUrl });
  await root.connect();
  await root.query(`CREATE DATABASE ${name}`);
  const url = dbUrl(serverUrl, name);
  const stats = new Client({ connectionString: url });
  let a;
  let b;
  try {
    a = await startService({ DATABASE_URL: url, WORKERS: 'true' });
    b = await startService({ DATABASE_URL: url, WORKERS: 'false' });
    await stats.connect();
    const account = await admin(a.base, 'POST', '/admin/accounts', { name: 'Bench', email: 'bench@example.com' });

    const latencies = [];
    for (let i = 0; i < KEYS; i++) {
      const { id, key } = await admin(a.base, 'POST', '/admin/keys', { account: account.id, mode: 'test' });
      const me = () => fetch(`${b.base}/v1/me`, { headers: { authorization: `Bearer ${key}` } }).then(async (r) => (await r.arrayBuffer(), r.status));
      while ((await me()) !== 200) await new Promise((r) => setTimeout(r, 5)); // B reads it once, then keeps it
      await admin(a.base, 'POST', `/admin/keys/${id}/revoke`);
      const revoked = performance.now();
      while ((await me()) !== 401) {
        if (performance.now() - revoked > 70_000) throw new Error('the revocation never reached B');
      }
      latencies.push(performance.now() - revoked);
    }

    const xacts = async () => Number((await stats.query('SELECT xact_commit FROM pg_stat_database WHERE datname = $1', [name])).rows[0].xact_commit);
    // pg_stat_database is updated at most every 500 ms (PGSTAT_MIN_INTERVAL) and at session end.
    const settle = () => new Promise((r) => setTimeout(r, 1200));
    await settle();
    const idleFrom = await xacts();
    const idleStart = performance.now();
    await new Promise((r) => setTimeout(r, 5000));
    await settle();
    const idlePerSecond = ((await xacts()) - idleFrom) / ((performance.now() - idleStart - 1200) / 1000);

    const rssBefore = await rssOf(b.child.pid);
    const from = await xacts();
    const started = performance.now();
    const result = await burst(b.base, RANDOM_KEYS, 50);
    const seconds = (performance.now() - started) / 1000;
    await settle();
    const transactions = (await xacts()) - from;
    const rssAfter = await rssOf(b.child.pid);
    if (result.wrong) throw new Error(`${result.wrong} random keys were not refused with 401 invalid_key`);

    const out = {
      revocation_ms: { p50: +percentile(latencies, 50).toFixed(1), p99: +percentile(latencies, 99).toFixed(1), max: +Math.max(...latencies).toFixed(1), keys: KEYS },
      random_keys: {
        requests: result.sent,
        req_per_s: Math.round(result.sent / seconds),
        // Both instances' transactions, less what they make idle over the same time.
        transactions_per_request: +((transactions - idlePerSecond * (seconds + 1.2)) / result.sent).toFixed(2),
        idle_transactions_per_s: +idlePerSecond.toFixed(1),
        rss_mib_before: +(rssBefore / 2 ** 20).toFixed(1),
        rss_mib_after: +(rssAfter / 2 ** 20).toFixed(1),
      },
    };
    if (json) process.stdout.write(`${JSON.stringify(out)}\n`);
    else {
      process.stdout.write(
        `Revocation across two instances (A workers, B WORKERS=false), ${KEYS} keys, Postgres server\n` +
          `  revoke answered on A -> first 401 on B: p50 ${out.revocation_ms.p50} ms, p99 ${out.revocation_ms.p99} ms, max ${out.revocation_ms.max} ms (goal < 100 ms)\n` +
          `${out.random_keys.requests} random keys at c=50 against B: ${out.random_keys.req_per_s} req/s, ` +
          `${out.random_keys.transactions_per_request} database transactions per request beyond idle (${out.random_keys.idle_transactions_per_s}/s idle), ` +
          `B's RSS ${out.random_keys.rss_mib_before} -> ${out.random_keys.rss_mib_after} MiB\n`,
      );
    }
  } finally {
    for (const s of [a, b]) s?.child.kill('SIGTERM');
    await stats.end().catch(() => undefined);
    await new Promise((r) => setTimeout(r, 500));
    await root.query(`DROP DATABASE ${name} WITH (FORCE)`);
    await root.end();
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
