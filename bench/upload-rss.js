#!/usr/bin/env node
/**
 * Peak RSS of the service while a client streams an upload through a local signed URL,
 * for a 10 MiB baseline and a 100 MiB run beside it. Streaming means peak RSS stays flat as
 * the file grows (peak ratio near 1.0; a buffering server would add about 90 MiB). Server and client run
 * in this process; the client reuses one 64 KiB buffer, so what grows is the server.
 *
 *   npm run build && node bench/upload-rss.js [--sizes 10,100]   (sizes in MiB)
 */
require('reflect-metadata');
const fs = require('node:fs');
const http = require('node:http');
const { freePort, pumpBody } = require('./harness');
const os = require('node:os');
const path = require('node:path');
const { createApp } = require('../dist/src/app');
const { loadSettings } = require('../dist/src/config/settings');

const MiB = 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 0x5a);
const SAMPLE_MS = 10;

async function api(base, method, route, token, body) {
  const res = await fetch(`${base}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${route}: ${JSON.stringify(json)}`);
  return json;
}

/** PUTs `size` bytes with a fixed content-length, writing as fast as backpressure allows. */
function streamUpload(url, size) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'PUT', headers: { 'content-length': size, 'content-type': 'application/octet-stream' } });
    req.on('error', reject);
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(body)) : reject(new Error(`PUT ${res.statusCode}: ${body}`))));
    });
    pumpBody(req, size, CHUNK);
  });
}

async function measure(base, key, mib) {
  const size = mib * MiB;
  const grant = await api(base, 'POST', '/v1/uploads', key, { file_name: `bench-${mib}.bag`, file_size: size });
  if (global.gc) global.gc();
  const idle = process.memoryUsage().rss;
  let peak = idle;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), SAMPLE_MS);
  const started = process.hrtime.bigint();
  await streamUpload(grant.upload_url, size);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  const landed = await api(base, 'PUT', '/v1/uploads', key, { storage_path: grant.storage_path });
  if (!landed.exists || landed.size !== size) throw new Error(`upload did not land whole: ${JSON.stringify(landed)}`);
  return { mib, idle_rss_mib: +(idle / MiB).toFixed(1), peak_rss_mib: +(peak / MiB).toFixed(1), growth_mib: +((peak - idle) / MiB).toFixed(1), mib_per_s: +(mib / seconds).toFixed(1) };
}

async function main() {
  const sizesArg = process.argv.indexOf('--sizes');
  const sizes = sizesArg > 0 ? process.argv[sizesArg + 1].split(',').map(Number) : [10, 100];
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const app = await createApp(loadSettings({ DATA_DIR: dataDir, PORT: String(port), PUBLIC_BASE_URL: base, ADMIN_TOKEN: 'bench' }), { logger: ['error'] });
  await app.listen(port, '127.0.0.1');
  try {
    const account = await api(base, 'POST', '/admin/accounts', 'bench', { name: 'Bench', email: 'bench@example.com' });
    const { key } = await api(base, 'POST', '/admin/keys', 'bench', { account: account.id, mode: 'test' });
    // A warm-up upload so one-time allocations (JIT, pools) are not charged to the first run.
    await measure(base, key, 1);
    const rows = [];
    for (const mib of sizes) rows.push(await measure(base, key, mib));
    console.table(rows);
    const [baseline, largest] = [rows[0], rows[rows.length - 1]];
    // Peak against peak: growth alone is too close to zero to divide by.
    const ratio = largest.peak_rss_mib / baseline.peak_rss_mib;
    console.log(JSON.stringify({ bench: 'upload-rss', node: process.version, rows, peak_rss_ratio: +ratio.toFixed(3) }));
  } finally {
    await app.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
