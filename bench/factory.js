#!/usr/bin/env node
/**
 * Generation jobs (issue 12): test-mode prompt → review through the whole service, as a
 * creator sees it: POST /v1/factory/jobs, poll GET until awaiting_approval, approve, poll
 * until review (the worker analyses, plans, builds the artifact, validates it — ONNX run in
 * onnxruntime-web, URDF parsed and checked — and stores it). Goal: under 1 s. Both asset
 * kinds, one job at a time, on PGlite and (when DATABASE_URL or the local server answers)
 * on the Postgres server. The baseline is one GET /v1/me round trip in the same run.
 *   node bench/factory.js [--json]     (npm run build first)
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('pg');
const { startService } = require('./harness');

const JOBS = Number(process.env.BENCH_JOBS || 20);
const WARM_UP = 3;
const json = process.argv.includes('--json');
const serverUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const ADMIN = 'bench-admin-token';
const PROMPTS = {
  robot: 'a 6-DoF arm with a parallel gripper, 0.9 m reach, 5 kg payload',
  policy: 'a pick-and-place policy for a two-finger gripper taking parts off a moving belt, as ONNX',
};

const call = (base) => async (method, route, { key = ADMIN, body } = {}) => {
  const headers = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${route}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
};

async function until(api, key, id, stage) {
  for (;;) {
    const job = (await api('GET', `/v1/factory/jobs/${id}`, { key })).body;
    if (job.error) throw new Error(`job failed: ${JSON.stringify(job.error)}`);
    if (job.stage === stage) return job;
    await new Promise((r) => setTimeout(r, 2));
  }
}

async function promptToReview(api, key, prompt) {
  const start = performance.now();
  const created = await api('POST', '/v1/factory/jobs', { key, body: { prompt } });
  if (created.status !== 201) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
  await until(api, key, created.body.id, 'awaiting_approval');
  await api('POST', `/v1/factory/jobs/${created.body.id}/approve`, { key });
  await until(api, key, created.body.id, 'review');
  return performance.now() - start;
}

const quantile = (values, q) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))];

async function measure(backend, env) {
  const { base, child } = await startService(env, ADMIN);
  const api = call(base);
  try {
    const account = await api('POST', '/admin/accounts', { body: { name: 'Bench Creator', email: 'creator@example.com' } });
    const key = (await api('POST', '/admin/keys', { body: { account: account.body.id, mode: 'test', scopes: ['factory:run'] } })).body.key;
    await api('POST', '/admin/credits', { body: { account: account.body.id, mode: 'test', amount: 2 * (JOBS + WARM_UP) } });
    const result = { backend };
    for (const [kind, prompt] of Object.entries(PROMPTS)) {
      for (let i = 0; i < WARM_UP; i++) await promptToReview(api, key, prompt);
      const times = [];
      for (let i = 0; i < JOBS; i++) times.push(await promptToReview(api, key, prompt));
      result[kind] = { p50: Math.round(quantile(times, 0.5)), p99: Math.round(quantile(times, 0.99)) };
    }
    const me = [];
    for (let i = 0; i < 50; i++) {
      const start = performance.now();
      await api('GET', '/v1/me', { key });
      me.push(performance.now() - start);
    }
    result.me_p50 = Math.round(quantile(me, 0.5) * 10) / 10;
    return result;
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

async function main() {
  const results = [];
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-factory-'));
  results.push(await measure('PGlite', { DATA_DIR: dataDir }));
  fs.rmSync(dataDir, { recursive: true, force: true });
  const admin = new Client({ connectionString: serverUrl });
  let database;
  try {
    await admin.connect();
    database = `bench_factory_${Date.now()}`;
    await admin.query(`CREATE DATABASE ${database}`);
    const url = new URL(serverUrl);
    url.pathname = `/${database}`;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-factory-'));
    results.push(await measure('Postgres server', { DATA_DIR: dir, DATABASE_URL: url.toString() }));
    fs.rmSync(dir, { recursive: true, force: true });
  } catch (error) {
    if (!database) console.error(`no Postgres server (${error.message}); PGlite only`);
    else throw error;
  } finally {
    if (database) await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end().catch(() => undefined);
  }
  if (json) return console.log(JSON.stringify(results));
  console.log('| backend | robot p50 / p99 | policy p50 / p99 | GET /v1/me p50 | ratio p99 to the 1 s goal |');
  console.log('|---|---|---|---|---|');
  for (const r of results) {
    const worst = Math.max(r.robot.p99, r.policy.p99);
    console.log(`| ${r.backend} | ${r.robot.p50} / ${r.robot.p99} ms | ${r.policy.p50} / ${r.policy.p99} ms | ${r.me_p50} ms | ${(worst / 1000).toFixed(2)} |`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
