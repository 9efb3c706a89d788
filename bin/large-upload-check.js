#!/usr/bin/env node
'use strict';
/**
 * End-to-end proof that a large file (6 GiB by default: above S3's 5 GiB single-PUT limit)
 * goes through `svc upload` in parts and comes back byte for byte:
 *
 *   1. makes a sparse file of --size bytes with random bytes written at a few offsets (the
 *      start, the end, both sides of the first part boundaries, the middle), so a part put
 *      at the wrong offset or lost changes the hash;
 *   2. starts the built service (node dist/src/main.js) on a temp DATA_DIR with PGlite
 *      (DATABASE_URL empty), as bench/harness.js startService does, and makes an account
 *      and a test key with models:upload and models:read;
 *   3. runs the built CLI, `svc upload FILE --json` (bin/svc.js over dist/), with SVC_URL and
 *      SVC_API_KEY, and its resume state in a temp XDG_CACHE_HOME;
 *   4. publishes a model with the result, asks for its download URL, streams the download
 *      and compares its sha256 with the file's (both computed by streaming, never in memory);
 *   5. prints the timings and PASS or FAIL (exit code 1), and removes its temp dirs.
 *
 * Run (from the repository root, after `node bin/build.js`):
 *
 *   node bin/large-upload-check.js                       # 6 GiB on the local blob store
 *   node bin/large-upload-check.js --size 300MiB         # quicker
 *   node bin/large-upload-check.js --size 6GiB --parallel 8 --part-size 64MiB
 *
 * Against an S3 server: with S3_ENDPOINT, S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY
 * in the environment (as ../shared/tools/s3-rgw/start-s3.sh prints them) the service stores
 * the file there (S3_FORCE_PATH_STYLE=true, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY):
 *
 *   env $(../shared/tools/s3-rgw/start-s3.sh) node bin/large-upload-check.js
 *
 * Options: --size N (bytes, or with KiB/MiB/GiB, K/M/G; default 6GiB), --parallel N (the
 * CLI's, default 4), --part-size N (UPLOAD_PART_SIZE; default the service's, 64 MiB),
 * --threshold N (UPLOAD_MULTIPART_THRESHOLD; default the service's, 100 MiB). On the local
 * store the service keeps the parts, the joined file and the published copy under TMPDIR:
 * up to about three times --size of free disk.
 */
const { spawn } = require('node:child_process');
const { createHash, randomBytes } = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const os = require('node:os');
const path = require('node:path');
const { pipeline } = require('node:stream/promises');
const { ADMIN, startService } = require('../bench/harness');

const root = path.join(__dirname, '..');
const MiB = 1024 ** 2;

function parseBytes(text, name) {
  const match = /^(\d+(?:\.\d+)?)\s*(|b|k|kb|kib|m|mb|mib|g|gb|gib)$/i.exec(String(text).trim());
  if (!match) throw new Error(`${name} must be a size such as 300MiB or 6GiB, got "${text}"`);
  const unit = match[2].toLowerCase().replace(/i?b$/, '');
  return Math.round(Number(match[1]) * { '': 1, k: 1024, m: MiB, g: 1024 ** 3 }[unit]);
}

function options(argv) {
  const o = { size: 6 * 1024 ** 3, parallel: '4' };
  for (let i = 0; i < argv.length; i++) {
    const value = () => {
      if (argv[i + 1] === undefined) throw new Error(`${argv[i]} needs a value`);
      return argv[++i];
    };
    if (argv[i] === '--size') o.size = parseBytes(value(), '--size');
    else if (argv[i] === '--parallel') o.parallel = value();
    else if (argv[i] === '--part-size') o.partSize = parseBytes(value(), '--part-size');
    else if (argv[i] === '--threshold') o.threshold = parseBytes(value(), '--threshold');
    else if (argv[i] === '--help' || argv[i] === '-h') {
      process.stdout.write('usage: node bin/large-upload-check.js [--size 6GiB] [--parallel 4] [--part-size 64MiB] [--threshold 100MiB]\n');
      process.exit(0);
    } else throw new Error(`unknown argument "${argv[i]}"; see --help`);
  }
  if (o.size < 1) throw new Error('--size must be at least 1 byte');
  return o;
}

/** The service's S3 settings from start-s3.sh's names, or none: the local store. */
function storageEnv() {
  const { S3_ENDPOINT, S3_BUCKET, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY } = process.env;
  if (!S3_BUCKET) return { env: { S3_BUCKET: '', S3_ENDPOINT: '' }, label: 'the local blob store' };
  return {
    env: {
      S3_BUCKET,
      S3_ENDPOINT: S3_ENDPOINT || '',
      S3_FORCE_PATH_STYLE: process.env.S3_FORCE_PATH_STYLE || 'true',
      AWS_ACCESS_KEY_ID: S3_ACCESS_KEY_ID || process.env.AWS_ACCESS_KEY_ID || '',
      AWS_SECRET_ACCESS_KEY: S3_SECRET_ACCESS_KEY || process.env.AWS_SECRET_ACCESS_KEY || '',
    },
    label: `S3 bucket ${S3_BUCKET} at ${S3_ENDPOINT || 'AWS'}`,
  };
}

/** A sparse file of `size` bytes, random at a few offsets; resolves to those offsets. */
function makeSparseFile(file, size, partSize) {
  const fd = fs.openSync(file, 'w');
  try {
    fs.ftruncateSync(fd, size);
    const marks = [0, partSize - 10, partSize, 2 * partSize - 1, Math.floor(size / 2), size - 4096, size - 1];
    const offsets = [...new Set(marks.filter((o) => o >= 0 && o < size))].sort((a, b) => a - b);
    for (const offset of offsets) fs.writeSync(fd, randomBytes(Math.min(4096, size - offset)), 0, Math.min(4096, size - offset), offset);
    return offsets;
  } finally {
    fs.closeSync(fd);
  }
}

async function sha256OfStream(stream) {
  const hash = createHash('sha256');
  let bytes = 0;
  await pipeline(stream, async function* (source) {
    for await (const chunk of source) {
      hash.update(chunk);
      bytes += chunk.length;
    }
  });
  return { sha256: hash.digest('hex'), bytes };
}

/** A JSON call without a client-side timeout (publishing a large file freezes it first, which takes a while). */
function api(base, method, route, token, body) {
  const url = new URL(route, base);
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(payload && { 'content-type': 'application/json', 'content-length': payload.length }) },
    });
    request.on('error', reject);
    request.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => {
        let parsed;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          parsed = text;
        }
        if (response.statusCode >= 300) reject(new Error(`${method} ${route}: ${response.statusCode} ${text.slice(0, 500)}`));
        else resolve(parsed);
      });
    });
    request.end(payload);
  });
}

function download(url) {
  return new Promise((resolve, reject) => {
    const request = (url.startsWith('https:') ? https : http).get(url, (response) => {
      if (response.statusCode !== 200) {
        response.resume();
        return reject(new Error(`GET the download URL: HTTP ${response.statusCode}`));
      }
      sha256OfStream(response).then(resolve, reject);
    });
    request.on('error', reject);
  });
}

/** The built CLI; its stderr (the progress bar on a terminal) is this one's. */
function svc(args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'bin/svc.js'), ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(stdout)) : reject(new Error(`svc ${args.join(' ')} exited with ${code}`))));
  });
}

async function until(check, what, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
const rate = (bytes, ms) => `${(bytes / MiB / Math.max(ms / 1000, 0.001)).toFixed(1)} MiB/s`;

async function main() {
  const o = options(process.argv.slice(2));
  for (const built of ['dist/src/main.js', 'dist/clients/typescript/src/uploads.js']) {
    if (!fs.existsSync(path.join(root, built))) throw new Error(`${built} is missing: run "node bin/build.js" first`);
  }
  const storage = storageEnv();
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'large-upload-check-'));
  const dataDir = path.join(temp, 'data');
  const cacheDir = path.join(temp, 'cache');
  fs.mkdirSync(dataDir);
  const file = path.join(temp, 'large-policy.safetensors');
  const timings = [];
  const timed = async (what, task, bytes) => {
    const started = Date.now();
    const result = await task();
    const ms = Date.now() - started;
    timings.push(`${what.padEnd(28)} ${seconds(ms).padStart(9)}${bytes ? `  ${rate(bytes, ms)}` : ''}`);
    return result;
  };
  let service;
  const cleanUp = async () => {
    if (service && service.child.exitCode === null) {
      await new Promise((resolve) => {
        service.child.once('exit', resolve);
        service.child.kill('SIGTERM');
      });
    }
    fs.rmSync(temp, { recursive: true, force: true });
  };
  process.once('SIGINT', () => cleanUp().finally(() => process.exit(130)));
  // Output piped into `head` that went away must not skip the clean-up.
  process.stdout.on('error', () => undefined);

  try {
    const partSize = o.partSize ?? 64 * MiB;
    console.log(`large upload check: ${o.size} bytes (${(o.size / 1024 ** 3).toFixed(2)} GiB) through svc upload, ${storage.label}, --parallel ${o.parallel}`);
    if (!process.env.S3_BUCKET && fs.statfsSync) {
      const free = fs.statfsSync(temp).bavail * fs.statfsSync(temp).bsize;
      if (free < 3 * o.size) console.log(`warning: ${(free / 1024 ** 3).toFixed(1)} GiB free under ${os.tmpdir()}; the local store may need up to ${((3 * o.size) / 1024 ** 3).toFixed(1)} GiB`);
    }
    const threshold = o.threshold ?? 100 * MiB;
    const parts = Math.ceil(o.size / Math.max(partSize, Math.ceil(o.size / 10_000 / MiB) * MiB));
    console.log(o.size > threshold ? `in ${parts} parts of up to ${partSize / MiB} MiB (the service's plan)` : `in one PUT (at most the ${threshold / MiB} MiB multipart threshold)`);
    const offsets = makeSparseFile(file, o.size, partSize);
    console.log(`sparse file ${file} with random bytes at offsets ${offsets.join(', ')}`);
    const local = await timed('sha256 of the file', () => sha256OfStream(fs.createReadStream(file)), o.size);

    const serviceEnv = {
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      ...storage.env,
      ...(o.partSize && { UPLOAD_PART_SIZE: String(o.partSize) }),
      ...(o.threshold && { UPLOAD_MULTIPART_THRESHOLD: String(o.threshold) }),
    };
    service = await timed('service start', () => startService(serviceEnv, ADMIN));
    const account = await api(service.base, 'POST', '/admin/accounts', ADMIN, { name: 'Large Upload Check', email: 'large-upload-check@example.com' });
    const { key } = await api(service.base, 'POST', '/admin/keys', ADMIN, { account: account.id, mode: 'test', scopes: ['models:upload', 'models:read'] });
    // The key works once the service's read model has it.
    await until(() => api(service.base, 'GET', '/v1/me', key).then(() => true), 'the new key to work');

    const uploaded = await timed(
      'svc upload',
      () => svc(['upload', file, '--json', '--parallel', o.parallel], { SVC_URL: service.base, SVC_API_KEY: key, XDG_CACHE_HOME: cacheDir }),
      o.size,
    );
    console.log(`uploaded to ${uploaded.storage_path}`);
    const body = {
      title: 'Large Upload Check',
      description: 'A sparse file uploaded in parts by bin/large-upload-check.js',
      type: 'rl-policy',
      category: 'manipulation',
      license: 'MIT',
      ...uploaded,
    };
    const model = await timed('publish (freezes the file)', () => api(service.base, 'POST', '/v1/models', key, body), o.size);
    const grant = await api(service.base, 'POST', `/v1/models/${model.id}/download`, key);
    const served = await timed('download and sha256', () => download(grant.url), o.size);

    console.log(timings.join('\n'));
    const failures = [];
    if (served.bytes !== o.size) failures.push(`downloaded ${served.bytes} bytes, expected ${o.size}`);
    if (served.sha256 !== local.sha256) failures.push(`downloaded sha256 ${served.sha256}, the file's is ${local.sha256}`);
    if (grant.file_sha256 && grant.file_sha256 !== local.sha256) failures.push(`the API records sha256 ${grant.file_sha256}, the file's is ${local.sha256}`);
    if (fs.existsSync(path.join(cacheDir, 'svc', 'uploads')) && fs.readdirSync(path.join(cacheDir, 'svc', 'uploads')).length) failures.push('svc left a resume state file behind');
    if (failures.length) {
      console.log(`FAIL: ${failures.join('; ')}`);
      process.exitCode = 1;
    } else {
      console.log(`PASS: ${o.size} bytes, sha256 ${local.sha256}, the same downloaded${grant.file_sha256 ? ' and as recorded at publish' : ''}`);
    }
  } catch (error) {
    console.log(timings.join('\n'));
    console.log(`FAIL: ${error.message}`);
    process.exitCode = 1;
  } finally {
    await cleanUp();
  }
}

main().catch((error) => {
  console.error(`large-upload-check: ${error.message}`);
  process.exitCode = 1;
});
