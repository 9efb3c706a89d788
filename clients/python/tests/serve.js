#!/usr/bin/env node
'use strict';
/**
 * Starts the service (dist/, built by `node bin/build.js --stale`) for the Python client's
 * tests: on a free port, embedded Postgres and the local blob store in a temporary DATA_DIR,
 * the demo account's premium test key as the seller and a second account's test key as the
 * buyer. Prints one JSON line, { base_url, seller_key, buyer_key, admin_token, data_dir },
 * once the service answers, then keeps it running until stdin closes or a signal comes, and
 * stops it and removes DATA_DIR.
 *   node clients/python/tests/serve.js
 * Uploads above 5 MiB go in 5 MiB parts (the least S3 allows), so a test can send a file in parts.
 */
const { spawn } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '../../..');
const MIB = 1024 * 1024;

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

async function main() {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-pyclient-'));
  const adminToken = crypto.randomBytes(24).toString('hex');
  const base = `http://127.0.0.1:${port}`;
  const env = { ...process.env, PORT: String(port), HOST: '127.0.0.1', PUBLIC_BASE_URL: base, DATA_DIR: dataDir, ADMIN_TOKEN: adminToken, LOG_LEVEL: 'warn', NODE_ENV: 'development', UPLOAD_MULTIPART_THRESHOLD: String(5 * MIB), UPLOAD_PART_SIZE: String(5 * MIB), WEBHOOK_RETRY_SCHEDULE: '0,1,1' };
  // The embedded database: a DATABASE_URL of the caller's shell would skip the demo key.
  delete env.DATABASE_URL;
  delete env.EVENTSTORE_URL;
  const service = spawn(process.execPath, [path.join(root, 'dist/src/main.js')], { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
  let stopped = false;
  const stop = (code) => {
    if (stopped) return;
    stopped = true;
    const done = () => {
      fs.rmSync(dataDir, { recursive: true, force: true });
      process.exit(code);
    };
    if (service.exitCode !== null || service.signalCode !== null) return done();
    service.once('exit', done);
    service.kill('SIGTERM');
  };
  // Stopped from the start: a caller giving up while the service starts leaves nothing behind.
  process.on('SIGTERM', () => stop(0));
  process.on('SIGINT', () => stop(0));
  process.stdin.on('end', () => stop(0));
  process.stdin.resume();
  service.once('exit', (code) => {
    if (stopped) return;
    fs.rmSync(dataDir, { recursive: true, force: true });
    process.stderr.write(`the service exited (${code}) before the tests were done\n`);
    process.exit(1);
  });

  try {
    await ready(service, base, adminToken, dataDir);
  } catch (error) {
    process.stderr.write(`${error.stack ?? error}\n`);
    stop(1);
  }
}

/** Waits for the demo key, makes the buyer, prints the line the tests read. */
async function ready(service, base, adminToken, dataDir) {
  // The demo key is printed once the service listens; two minutes, for a machine under load.
  const sellerKey = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no demo key within 120 s; the service said:\n${out}`)), 120_000);
    service.stdout.on('data', (chunk) => {
      out += chunk;
      const found = /\b(svc_test_[A-Za-z0-9_]+)/.exec(out);
      if (found) {
        clearTimeout(timer);
        resolve(found[1]);
      }
    });
  });
  service.stdout.resume();

  const admin = async (method, url, body) => {
    const res = await fetch(`${base}${url}`, { method, headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const json = await res.json();
    if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const buyer = await admin('POST', '/admin/accounts', { name: 'Buyer', email: 'buyer@example.com' });
  const buyerKey = await admin('POST', '/admin/keys', { account: buyer.id, mode: 'test', tier: 'free', scopes: [] });

  process.stdout.write(`${JSON.stringify({ base_url: base, seller_key: sellerKey, buyer_key: buyerKey.key, admin_token: adminToken, data_dir: dataDir })}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
