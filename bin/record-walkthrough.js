#!/usr/bin/env node
'use strict';
/**
 * Records the README's "Sell and buy in the sandbox" walk-through, and the other calls a user
 * makes around it, against one checkout of this service, as JSON lines with every volatile
 * value (ids, keys, secrets, timestamps, signatures, ports) replaced by a placeholder numbered
 * in order of first appearance, so two checkouts' recordings can be compared with diff:
 *
 *   node bin/record-walkthrough.js /work/before /tmp/walkthrough-before.jsonl
 *   node bin/record-walkthrough.js /work/main   /tmp/walkthrough-after.jsonl
 *   diff /tmp/walkthrough-before.jsonl /tmp/walkthrough-after.jsonl
 *
 * Numbered placeholders keep cross-references comparable (<pur_1> in a response, then in a
 * refund's path). Three kinds are not numbered, because whether two values coincide depends on
 * the clock's second, not on the code: unix seconds (<unix>), signed URLs' signatures and the
 * upload token (<signature>); event-log positions keep their global position and number only
 * their Postgres transaction id (<xid_N>), which counts background transactions too.
 * Only where the docs say a write lands later (the seller's ledger after a payment, refund or
 * dispute; webhook deliveries) does it poll, unrecorded, before the recorded call.
 *
 * Options: --port N (default 3917; must be free), --keep-data (leave the temp data dir).
 * The service's own output goes to OUTPUT.service.log.
 *
 * It builds the checkout when its dist/ is stale (node bin/build.js --stale), starts
 * `node dist/src/main.js` there as the README does (fresh temp DATA_DIR, NODE_ENV=development,
 * no DATABASE_URL, the sandbox processor), takes the demo key (the seller) from its stdout and
 * the admin token from DATA_DIR/admin_token as the CLI does, and makes the CLI's calls to the
 * operator API /admin directly. Webhook deliveries go to a receiver in this process and are
 * recorded at the end. SIGTERM stops the service; the temp data dir is deleted.
 *
 * Plain Node (>= 20, global fetch), no dependencies.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');
const http = require('node:http');
const crypto = require('node:crypto');
const { spawn, spawnSync } = require('node:child_process');

// ---------------------------------------------------------------------------------------------
// Arguments

function parseArgs(argv) {
  const positionals = [];
  const options = { port: 3917, keepData: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--port') options.port = Number(argv[++i]);
    else if (a.startsWith('--port=')) options.port = Number(a.slice('--port='.length));
    else if (a === '--keep-data') options.keepData = true;
    else if (a === '--help' || a === '-h') usage(0);
    else if (a.startsWith('--')) usage(2, `unknown option ${a}`);
    else positionals.push(a);
  }
  if (positionals.length !== 2) usage(2, 'give a checkout directory and an output file');
  if (!Number.isInteger(options.port) || options.port < 1024 || options.port > 65535) usage(2, '--port must be 1024-65535');
  return { checkout: path.resolve(positionals[0]), output: path.resolve(positionals[1]), ...options };
}

function usage(code, message) {
  if (message) process.stderr.write(`${message}\n`);
  process.stderr.write('usage: node bin/record-walkthrough.js CHECKOUT_DIR OUTPUT.jsonl [--port N] [--keep-data]\n');
  process.exit(code);
}

// ---------------------------------------------------------------------------------------------
// Normalization: each distinct volatile value becomes <kind_N>, N in order of first appearance.

class Normalizer {
  constructor() {
    this.maps = new Map(); // kind -> Map(raw -> placeholder)
    this.literals = []; // [raw, replacement] replaced verbatim first (ports)
  }

  placeholder(kind, raw) {
    let map = this.maps.get(kind);
    if (!map) this.maps.set(kind, (map = new Map()));
    let p = map.get(raw);
    if (!p) map.set(raw, (p = `<${kind}_${map.size + 1}>`));
    return p;
  }

  literal(raw, replacement) {
    this.literals.push([raw, replacement]);
  }

  string(s) {
    for (const [raw, replacement] of this.literals) s = s.split(raw).join(replacement);
    return (
      s
        // UUIDs (event ids, call ids)
        .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, (m) => this.placeholder('uuid', m.toLowerCase()))
        // Prefixed opaque ids, keys and secrets: acct_, lst_, pur_, cs_test_, key_, svc_test_,
        // whsec_test_, we_, whd_, txn_, po_, evt_, req_, sbx_pay_, sbx_dp_... (a 16+ character tail)
        .replace(/\b([A-Za-z][A-Za-z0-9]*(?:_[A-Za-z][A-Za-z0-9]*)*?)_([A-Za-z0-9]{16,})\b/g, (m, prefix) => this.placeholder(prefix, m))
        .replace(/\bchatcmpl-[A-Za-z0-9]+/g, (m) => this.placeholder('chatcmpl', m))
        // ISO 8601 instants, then plain dates
        .replace(/\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?/g, (m) => this.placeholder('ts', m))
        .replace(/\b\d{4}-\d{2}-\d{2}\b/g, (m) => this.placeholder('date', m))
        // Event-log positions "<transaction id>:<global position>": the Postgres transaction id
        // counts every transaction (migrations, leases, checkpoints) and varies run to run; the
        // global position counts events and is kept.
        .replace(/\b(\d{20}):(\d{20})\b/g, (m, xid, global) => `${this.placeholder('xid', xid)}:${global}`)
        // Signed URLs' signatures: an HMAC of the path and the expiry second, so two URLs for the
        // same object share one or not by the clock: not numbered.
        .replace(/([?&]signature=)[0-9a-f]{32,}\b/g, '$1<signature>')
        // Other long hex: digests, content-addressed paths
        .replace(/\b[0-9a-f]{32,}\b/gi, (m) => this.placeholder('hex', m))
        // Unix seconds (2020-2036) and milliseconds inside text: signed URLs' expires=, storage
        // paths. Not numbered: whole seconds coincide or not by the clock (two events in the same
        // second one run, either side of a second boundary the next), which is noise, not a change.
        .replace(/(?<![\d.])(?:1[6-9]\d{8}|20\d{8})(?:\d{3})?(?![\d.])/g, (m) => (m.length === 13 ? '<unixms>' : '<unix>'))
    );
  }

  number(n) {
    if (Number.isInteger(n) && n >= 1.6e9 && n < 2.1e9) return '<unix>';
    if (Number.isInteger(n) && n >= 1.6e12 && n < 2.1e12) return '<unixms>';
    return n;
  }

  /** A JSON value, walked in document order (keys keep their order). */
  value(v) {
    if (typeof v === 'string') return this.string(v);
    if (typeof v === 'number') return this.number(v);
    if (Array.isArray(v)) return v.map((x) => this.value(x));
    if (v && typeof v === 'object') {
      const out = {};
      for (const [k, x] of Object.entries(v)) {
        // An upload grant's token is its URL's signature (see string()).
        out[this.string(k)] = k === 'token' && typeof x === 'string' && /^[0-9a-f]{32,}$/.test(x) ? '<signature>' : this.value(x);
      }
      return out;
    }
    return v;
  }
}

// ---------------------------------------------------------------------------------------------
// The service

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function assertPortFree(port) {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (error) => reject(new Error(`port ${port} is not free (${error.code}); pass --port`)));
    probe.listen(port, '127.0.0.1', () => probe.close(resolve));
  });
}

function build(checkout) {
  const result = spawnSync(process.execPath, ['bin/build.js', '--stale'], { cwd: checkout, stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0) throw new Error(`node bin/build.js --stale failed in ${checkout} (exit ${result.status})`);
  if (!fs.existsSync(path.join(checkout, 'dist', 'src', 'main.js'))) throw new Error(`no dist/src/main.js in ${checkout} after the build`);
}

/** Settings that would point the service elsewhere than the README's defaults. */
const CLEARED_ENV = [
  'DATABASE_URL', 'EVENTSTORE_URL', 'ADMIN_TOKEN', 'PUBLIC_BASE_URL', 'HOST', 'PORT', 'DATA_DIR', 'NODE_ENV', 'PAYMENTS',
  'S3_BUCKET', 'S3_ENDPOINT', 'S3_REGION', 'S3_FORCE_PATH_STYLE', 'CANONICAL_HOST', 'WEBHOOK_ENCRYPTION_KEY',
  'WEBHOOK_RETRY_SCHEDULE', 'WEBHOOK_TIMEOUT_MS', 'PLATFORM_FEE_BPS', 'SANDBOX_PROCESSOR_FEE_BPS',
  'SANDBOX_PROCESSOR_FEE_FIXED_CENTS', 'SANDBOX_DISPUTE_FEE_CENTS', 'WORKERS', 'LOG_LEVEL', 'INFERENCE_UPSTREAM_URL',
  'INFERENCE_UPSTREAM_KEY', 'INFERENCE_UPSTREAM_MODELS', 'UPLOAD_MAX_BYTES', 'BODY_LIMIT_BYTES', 'SVC_URL', 'SVC_API_KEY',
  'STRIPE_SECRET_KEY_TEST', 'STRIPE_WEBHOOK_SECRET_TEST', 'STRIPE_SECRET_KEY_LIVE', 'STRIPE_WEBHOOK_SECRET_LIVE', 'STRIPE_API_BASE',
];

/** Starts `node dist/src/main.js` and resolves with the demo key once it is printed (after listen). */
function startService(checkout, port, dataDir, logFile) {
  const env = { ...process.env };
  for (const name of CLEARED_ENV) delete env[name];
  Object.assign(env, { DATA_DIR: dataDir, PORT: String(port), NODE_ENV: 'development' });
  const log = fs.createWriteStream(logFile);
  const child = spawn(process.execPath, ['dist/src/main.js'], { cwd: checkout, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  child.stderr.on('data', (chunk) => log.write(chunk));
  let stdout = '';
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no demo key on the service's stdout within 180 s (see ${logFile})`)), 180_000);
    child.stdout.on('data', (chunk) => {
      log.write(chunk);
      if (stdout === null) return;
      stdout += chunk.toString('utf8');
      const match = /Created the demo account[^\n]*\n\s*\n\s*(svc_test_[A-Za-z0-9]+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        stdout = null;
        resolve(match[1]);
      }
    });
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`the service exited (${signal ?? `code ${code}`}) before printing the demo key (see ${logFile})`));
    });
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const outcome = await Promise.race([exited, sleep(35_000).then(() => undefined)]);
      if (!outcome) {
        child.kill('SIGKILL');
        await exited;
      }
    }
    await new Promise((resolve) => log.end(resolve));
    return exited;
  };
  return { ready, stop, exited };
}

/** The admin token as the CLI finds it: ADMIN_TOKEN, else DATA_DIR/admin_token. */
function adminTokenOf(dataDir) {
  return fs.readFileSync(path.join(dataDir, 'admin_token'), 'utf8').trim();
}

/** A local webhook receiver: answers 200 to every POST and keeps what it got. */
function startReceiver() {
  const received = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      received.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({ server, received, port: server.address().port }));
  });
}

// ---------------------------------------------------------------------------------------------
// Recording

/** Response headers whose values vary by request and say nothing of the API. */
const UNRECORDED_HEADER_VALUES = new Set(['date', 'x-request-id', 'content-length', 'keep-alive', 'connection']);

class Recorder {
  constructor(baseUrl, normalizer) {
    this.baseUrl = baseUrl;
    this.n = normalizer;
    this.lines = [];
    this.step = '';
    this.credentials = {};
  }

  /**
   * One exchange, recorded. opts: as (credential name or 'none'), json (a value sent as
   * JSON), text + contentType (a raw body), form (an object sent urlencoded), bytes (a Buffer),
   * note (kept in the record). Returns { status, headers, body } with the raw values.
   */
  async call(method, target, opts = {}) {
    const url = /^https?:/.test(target) ? target : `${this.baseUrl}${target}`;
    const headers = {};
    const as = opts.as ?? 'none';
    if (as !== 'none') {
      if (!(as in this.credentials)) throw new Error(`no credential named ${as}`);
      headers.authorization = `Bearer ${this.credentials[as]}`;
    }
    let body;
    let sent;
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      headers['content-type'] = 'application/json';
      sent = opts.json;
    } else if (opts.text !== undefined) {
      body = opts.text;
      headers['content-type'] = opts.contentType ?? 'application/json';
      sent = { raw: opts.text, content_type: headers['content-type'] };
    } else if (opts.form !== undefined) {
      body = new URLSearchParams(opts.form).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
      sent = { form: opts.form };
    } else if (opts.bytes !== undefined) {
      body = opts.bytes;
      headers['content-type'] = 'application/octet-stream';
      sent = { bytes: opts.bytes.toString('utf8') };
    }
    Object.assign(headers, opts.headers ?? {});
    const response = await fetch(url, { method, headers, body, redirect: 'manual' });
    const buffer = Buffer.from(await response.arrayBuffer());
    const responseHeaders = Object.fromEntries(response.headers);
    const contentType = responseHeaders['content-type'] ?? '';
    let parsed;
    let text = buffer.toString('utf8');
    if (/json/.test(contentType) && buffer.length) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
    }
    const result = { status: response.status, headers: responseHeaders, body: parsed !== undefined ? parsed : text };
    if (!opts.unrecorded) this.record(method, url, as, sent, result, parsed, text, opts.note);
    return result;
  }

  record(method, url, as, sent, result, parsed, text, note) {
    const n = this.n;
    const pathOnly = url.startsWith(this.baseUrl) ? url.slice(this.baseUrl.length) : url;
    const line = { step: this.step, method, path: n.string(pathOnly), as };
    if (note) line.note = note;
    if (sent !== undefined) line.request_body = n.value(sent);
    line.status = result.status;
    const headers = {};
    for (const name of Object.keys(result.headers).sort()) {
      headers[name] = UNRECORDED_HEADER_VALUES.has(name) ? '<present>' : n.string(result.headers[name]);
    }
    delete headers.date;
    line.headers = headers;
    if (parsed !== undefined) {
      line.body = n.value(parsed);
      // JSON.parse loses the bytes' form; keep the text too when it is not the compact form.
      if (JSON.stringify(parsed) !== text) line.body_text = n.string(text);
    } else {
      line.body_text = n.string(text);
    }
    this.lines.push(line);
  }

  /** A line that is not an HTTP exchange (webhook deliveries received). */
  note(kind, value) {
    this.lines.push({ step: this.step, kind, ...this.n.value(value) });
  }
}

/** Polls fn (unrecorded calls) until it returns true; whether it had to wait is returned. */
async function settle(label, fn, timeoutMs = 20_000) {
  if (await fn()) return false;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    await sleep(200);
    if (await fn()) return true;
  }
  throw new Error(`timed out waiting for ${label}`);
}

/** The body of an answer with the given status ('2xx': any success); anything else stops the walk-through. */
function expect(result, status, what) {
  if (status === '2xx' ? result.status < 200 || result.status > 299 : result.status !== status) {
    throw new Error(`${what}: expected HTTP ${status}, got ${result.status}: ${typeof result.body === 'string' ? result.body.slice(0, 300) : JSON.stringify(result.body).slice(0, 300)}`);
  }
  return result.body;
}

// ---------------------------------------------------------------------------------------------
// The walk-through

async function walkthrough(r, ctx) {
  const { hookUrl } = ctx;
  const settledSteps = [];
  const waitFor = async (label, fn) => {
    if (await settle(label, fn)) settledSteps.push(label);
  };
  const countOf = async (as, route) => {
    const res = await r.call('GET', route, { as, unrecorded: true });
    return res.status === 200 ? res.body.items.length : -1;
  };

  // --- README: run it -----------------------------------------------------------------------
  r.step = 'start';
  await r.call('GET', '/healthz');
  await r.call('GET', '/v1/me', { as: 'seller' });

  // A receiver for the seller's test-mode events, for the whole walk-through.
  r.step = 'webhook receiver';
  const endpoint = expect(
    await r.call('POST', '/v1/webhook_endpoints', {
      as: 'seller',
      json: {
        url: hookUrl,
        events: ['listing.published', 'listing.unpublished', 'listing.purchased', 'asset.downloaded', 'payout.paid', 'purchase.refunded', 'not.a.type'],
        description: 'walk-through receiver',
      },
    }),
    '2xx',
    'POST /v1/webhook_endpoints',
  );
  ctx.endpointId = endpoint.id;
  ctx.endpointSecret = endpoint.secret;

  // --- README: sell and buy in the sandbox ------------------------------------------------------
  // SVC_API_KEY=$SELLER svc models publish model.json --file policy.onnx
  r.step = 'svc models publish';
  const model = { title: 'Grasp Policy', type: 'rl-policy', license: 'MIT', price_cents: 2500 };
  const file = Buffer.from('onnx weights\n');
  await r.call('GET', '/v1/uploads', { as: 'seller' });
  const grant = expect(await r.call('POST', '/v1/uploads', { as: 'seller', json: { file_name: 'policy.onnx', file_size: file.length } }), '2xx', 'POST /v1/uploads');
  expect(await r.call('PUT', grant.upload_url, { bytes: file }), '2xx', 'PUT upload_url');
  const landed = expect(await r.call('PUT', '/v1/uploads', { as: 'seller', json: { storage_path: grant.storage_path } }), '2xx', 'PUT /v1/uploads');
  if (!landed.exists || landed.size !== file.length) throw new Error('the upload did not land whole');
  const published = await r.call('POST', '/v1/models', {
    as: 'seller',
    json: { ...model, storage_path: grant.storage_path, file_name: grant.file_name, file_size: file.length, file_extension: grant.file_extension },
  });
  if (published.status >= 300) throw new Error(`POST /v1/models: HTTP ${published.status}`);

  // svc accounts create --name "Buyer Inc" --email buyer@example.com
  r.step = 'svc accounts create';
  expect(await r.call('POST', '/admin/accounts', { as: 'admin', json: { name: 'Buyer Inc', email: 'buyer@example.com' } }), '2xx', 'POST /admin/accounts');
  // svc keys create --account buyer-inc --mode test --scopes models:read
  r.step = 'svc keys create';
  const buyerKey = expect(await r.call('POST', '/admin/keys', { as: 'admin', json: { account: 'buyer-inc', mode: 'test', scopes: ['models:read'] } }), '2xx', 'POST /admin/keys');
  r.credentials.buyer = buyerKey.key;
  ctx.buyerKeyId = buyerKey.id;

  r.step = 'browse';
  await r.call('GET', '/v1/me', { as: 'buyer' });
  await r.call('GET', '/v1/models', { as: 'buyer' });
  await r.call('GET', '/v1/models/grasp-policy', { as: 'buyer' });
  await r.call('POST', '/v1/models/grasp-policy/download', { as: 'buyer', note: 'before buying' });

  // curl -X POST /v1/purchases -d '{"asset":"grasp-policy"}'   # 201, a checkout_session
  r.step = 'purchase';
  const session = expect(await r.call('POST', '/v1/purchases', { as: 'buyer', json: { asset: 'grasp-policy' } }), 201, 'POST /v1/purchases');
  const checkoutPath = new URL(session.checkout_url).pathname;
  await r.call('GET', checkoutPath, { note: 'the hosted checkout page' });
  // curl -d card_number=4242424242424242 /checkout/cs_test_...
  expect(await r.call('POST', checkoutPath, { form: { card_number: '4242424242424242' } }), '2xx', 'POST checkout');
  await r.call('GET', checkoutPath, { note: 'after paying' });

  // curl -X POST /v1/models/grasp-policy/download
  r.step = 'download';
  const download = await r.call('POST', '/v1/models/grasp-policy/download', { as: 'buyer' });
  const downloadUrl = download.body && (download.body.url || download.body.download_url);
  if (downloadUrl) await r.call('GET', downloadUrl, { note: 'the signed download URL' });
  await r.call('GET', '/v1/purchases', { as: 'buyer' });

  // The sale reaches the seller's ledger through the fulfilment subscriber.
  r.step = 'seller ledger after the sale';
  await waitFor('the sale in balance_transactions', async () => (await countOf('seller', '/v1/balance_transactions')) >= 1);
  await r.call('GET', '/v1/balance_transactions', { as: 'seller' });
  await r.call('GET', '/v1/balance', { as: 'seller' });

  // svc payouts run --mode test && svc ledger verify && svc ledger trial-balance --mode test
  r.step = 'svc payouts run';
  await r.call('POST', '/admin/payouts/run', { as: 'admin', json: { mode: 'test' } });
  r.step = 'svc ledger verify';
  await r.call('GET', '/admin/ledger/verify', { as: 'admin' });
  r.step = 'svc ledger trial-balance';
  await r.call('GET', '/admin/ledger/trial-balance?mode=test', { as: 'admin' });

  // --- Around the walk-through -------------------------------------------------------------------
  r.step = 'after the payout';
  await r.call('GET', '/v1/payouts', { as: 'seller' });
  await r.call('GET', '/v1/balance', { as: 'seller' });
  await r.call('GET', '/v1/balance_transactions', { as: 'seller' });
  await r.call('GET', '/v1/balance_transactions?type=payout', { as: 'seller' });
  await r.call('GET', '/v1/balance/history?interval=week', { as: 'seller' });

  r.step = 'bad requests';
  await r.call('GET', '/v1/me', { note: 'no key' });
  await r.call('GET', '/v1/me', { as: 'bogus', note: 'unknown key' });
  await r.call('POST', '/v1/purchases', { as: 'buyer', json: { asset: 'no-such-asset' } });
  await r.call('POST', '/v1/purchases', { as: 'buyer', text: '{"asset": "grasp-policy"', note: 'invalid JSON' });
  await r.call('POST', '/v1/purchases', { as: 'buyer', json: {}, note: 'no asset' });
  await r.call('POST', '/v1/purchases', { as: 'buyer', json: { asset: 'grasp-policy' }, note: 'already bought' });
  await r.call('POST', '/v1/purchases', { as: 'seller', json: { asset: 'grasp-policy' }, note: 'the seller buys its own' });
  await r.call('POST', '/v1/webhook_endpoints', { as: 'buyer', json: { url: hookUrl, events: ['payout.paid'] }, note: 'a key without webhooks:write' });
  await r.call('GET', '/v1/balance', { as: 'buyer', note: 'models:read only' });
  await r.call('GET', '/admin/ledger/verify', { as: 'seller', note: 'an API key is not the admin token' });
  await r.call('POST', '/admin/keys', { as: 'admin', json: { account: 'no-such-account', mode: 'test' } });
  await r.call('GET', '/v1/no-such-route', { as: 'seller' });

  r.step = 'webhook endpoints';
  const second = await r.call('POST', '/v1/webhook_endpoints', {
    as: 'seller',
    json: { url: `${hookUrl}/second`, events: ['payout.paid'], description: 'second' },
  });
  await r.call('POST', '/v1/webhook_endpoints', { as: 'seller', json: { url: 'http://169.254.169.254/latest', events: ['payout.paid'] }, note: 'metadata address' });
  await r.call('POST', '/v1/webhook_endpoints', { as: 'seller', json: { url: 'not a url', events: ['payout.paid'] }, note: 'not a URL' });
  await r.call('GET', '/v1/webhook_endpoints', { as: 'seller' });
  if (second.body && second.body.id) {
    const id = second.body.id;
    await r.call('GET', `/v1/webhook_endpoints/${id}`, { as: 'seller' });
    await r.call('PATCH', `/v1/webhook_endpoints/${id}`, { as: 'seller', json: { enabled: false, description: 'paused' } });
    await r.call('PATCH', `/v1/webhook_endpoints/${id}`, { as: 'seller', json: { events: ['payout.paid', 'payout.failed'], enabled: true } });
    await r.call('PATCH', `/v1/webhook_endpoints/${id}`, { as: 'seller', json: { url: '' }, note: 'empty url' });
    await r.call('GET', `/v1/webhook_endpoints/${id}`, { as: 'buyer', note: 'another account' });
    await r.call('DELETE', `/v1/webhook_endpoints/${id}`, { as: 'seller' });
    await r.call('DELETE', `/v1/webhook_endpoints/${id}`, { as: 'seller', note: 'again' });
    await r.call('PATCH', `/v1/webhook_endpoints/${id}`, { as: 'seller', json: { description: 'gone' }, note: 'deleted' });
  }
  await r.call('GET', '/v1/webhook_endpoints', { as: 'seller' });

  r.step = 'listings';
  await r.call('POST', '/v1/listings', { as: 'seller', json: { title: 'Nav Policy', type: 'rl-policy', license: 'MIT', price_cents: 1500 } });
  await r.call('PATCH', '/v1/listings/nav-policy', { as: 'seller', json: { description: 'Navigation for a diff-drive base.', tags: ['nav', 'ros2'] } });
  await r.call('POST', '/v1/listings/nav-policy/publish', { as: 'seller', note: 'a draft without a file' });
  await r.call('GET', '/v1/listings', { as: 'seller' });
  await r.call('GET', '/v1/listings/nav-policy', { as: 'seller' });
  await r.call('PATCH', '/v1/models/grasp-policy', { as: 'seller', json: { description: 'A grasping policy.', price_cents: 3000 } });
  await r.call('PATCH', '/v1/models/grasp-policy', { as: 'buyer', json: { description: 'not mine' }, note: 'another account' });
  await r.call('GET', '/v1/models/grasp-policy', { as: 'buyer' });

  // svc purchases refund pur_... [--amount 1000]
  r.step = 'svc purchases refund';
  const purchases = expect(await r.call('GET', '/v1/purchases', { as: 'buyer', unrecorded: true }), '2xx', 'GET /v1/purchases');
  const purchaseId = purchases.items[0].id;
  const before = await countOf('seller', '/v1/balance_transactions');
  await r.call('POST', `/admin/purchases/${purchaseId}/refund`, { as: 'admin', json: { amount_cents: 1000 } });
  await waitFor('the partial refund in balance_transactions', async () => (await countOf('seller', '/v1/balance_transactions')) > before);
  await r.call('GET', '/v1/purchases', { as: 'buyer' });
  await r.call('GET', '/v1/balance', { as: 'seller' });
  const beforeFull = await countOf('seller', '/v1/balance_transactions');
  await r.call('POST', `/admin/purchases/${purchaseId}/refund`, { as: 'admin', json: {} });
  await waitFor('the full refund in balance_transactions', async () => (await countOf('seller', '/v1/balance_transactions')) > beforeFull);
  await r.call('POST', `/admin/purchases/${purchaseId}/refund`, { as: 'admin', json: {}, note: 'already refunded' });
  await r.call('POST', '/admin/purchases/pur_000000000000000000000000/refund', { as: 'admin', json: {}, note: 'unknown purchase' });
  await r.call('GET', '/v1/purchases', { as: 'buyer' });
  await r.call('POST', '/v1/models/grasp-policy/download', { as: 'buyer', note: 'after the refund' });
  await r.call('GET', '/v1/balance_transactions', { as: 'seller' });
  await r.call('GET', '/v1/balance', { as: 'seller' });
  await r.call('GET', '/v1/payouts', { as: 'seller' });

  // A second buyer: a declined card, then the card that pays and is disputed.
  r.step = 'second buyer, disputed';
  expect(await r.call('POST', '/admin/accounts', { as: 'admin', json: { name: 'Second Buyer', email: 'second@example.com' } }), '2xx', 'POST /admin/accounts');
  const second2 = expect(await r.call('POST', '/admin/keys', { as: 'admin', json: { account: 'second-buyer', mode: 'test', scopes: ['models:read'] } }), '2xx', 'POST /admin/keys');
  r.credentials.buyer2 = second2.key;
  const session2 = expect(await r.call('POST', '/v1/purchases', { as: 'buyer2', json: { asset: 'grasp-policy' } }), 201, 'POST /v1/purchases');
  const checkout2 = new URL(session2.checkout_url).pathname;
  await r.call('POST', checkout2, { form: { card_number: '4000000000000002' }, note: 'declined' });
  await r.call('POST', checkout2, { form: { card_number: '1234' }, note: 'unknown card' });
  const beforeDispute = await countOf('seller', '/v1/balance_transactions');
  await r.call('POST', checkout2, { form: { card_number: '4000 0000 0000 0259' }, note: 'pays, then disputed' });
  await r.call('POST', '/v1/models/grasp-policy/download', { as: 'buyer2' });
  await waitFor('the disputed sale in balance_transactions', async () => (await countOf('seller', '/v1/balance_transactions')) >= beforeDispute + 2);
  const disputes = await r.call('GET', '/admin/disputes?mode=test', { as: 'admin' });
  await r.call('GET', '/admin/disputes?mode=test&status=bogus', { as: 'admin' });
  await r.call('GET', '/v1/balance', { as: 'seller' });
  const disputeId = disputes.body && disputes.body.items && disputes.body.items[0] && disputes.body.items[0].id;
  if (disputeId) {
    const beforeClose = await countOf('seller', '/v1/balance_transactions');
    await r.call('POST', `/admin/disputes/${disputeId}/close`, { as: 'admin', json: { outcome: 'won' } });
    await waitFor('the won dispute in balance_transactions', async () => (await countOf('seller', '/v1/balance_transactions')) > beforeClose);
    await r.call('POST', `/admin/disputes/${disputeId}/close`, { as: 'admin', json: { outcome: 'lost' }, note: 'already closed' });
    await r.call('GET', '/admin/disputes?mode=test', { as: 'admin' });
  }
  await r.call('GET', '/v1/purchases', { as: 'buyer2' });
  await r.call('GET', '/v1/balance_transactions', { as: 'seller' });
  await r.call('GET', '/v1/balance', { as: 'seller' });

  r.step = 'svc payouts run (again)';
  await r.call('POST', '/admin/payouts/run', { as: 'admin', json: { mode: 'test', account: 'demo' } });
  await r.call('GET', '/v1/payouts', { as: 'seller' });

  r.step = 'keys';
  await r.call('GET', '/admin/keys?account=buyer-inc', { as: 'admin' });
  await r.call('GET', '/admin/accounts/buyer-inc', { as: 'admin' });
  await r.call('POST', `/admin/keys/${ctx.buyerKeyId}/revoke`, { as: 'admin' });
  await r.call('GET', '/v1/me', { as: 'buyer', note: 'revoked' });
  await r.call('POST', `/admin/keys/${ctx.buyerKeyId}/revoke`, { as: 'admin', note: 'again' });
  await r.call('GET', '/admin/keys?account=buyer-inc', { as: 'admin' });

  r.step = 'credits and factory';
  await r.call('POST', '/admin/credits', { as: 'admin', json: { account: 'demo', mode: 'test', amount: 3 } });
  await r.call('POST', '/admin/credits', { as: 'admin', json: { account: 'demo', mode: 'test', amount: 0 }, note: 'zero' });
  await r.call('GET', '/v1/factory/jobs', { as: 'seller' });
  await r.call('GET', '/admin/factory/jobs?account=demo&mode=test', { as: 'admin' });

  r.step = 'inference';
  await r.call('GET', '/v1/inference/models', { as: 'seller' });
  await r.call('POST', '/v1/chat/completions', {
    as: 'seller',
    json: { model: 'svc-fast-8b', messages: [{ role: 'user', content: 'Plan a pick-and-place for a UR5.' }] },
  });
  await r.call('POST', '/v1/chat/completions', { as: 'buyer2', json: { model: 'svc-fast-8b', messages: [{ role: 'user', content: 'hi' }] }, note: 'free key' });
  await r.call('GET', '/v1/usage?days=7', { as: 'seller' });

  r.step = 'unpublish';
  await r.call('DELETE', '/v1/models/grasp-policy', { as: 'seller' });
  await r.call('GET', '/v1/models/grasp-policy', { as: 'buyer2' });
  await r.call('POST', '/v1/purchases', { as: 'buyer2', json: { asset: 'grasp-policy' }, note: 'unpublished' });

  r.step = 'svc ledger (end)';
  await r.call('GET', '/admin/ledger/verify', { as: 'admin' });
  await r.call('GET', '/admin/ledger/trial-balance?mode=test', { as: 'admin' });
  await r.call('GET', '/admin/ledger/reconcile?mode=test', { as: 'admin' });
  await r.call('GET', '/admin/ledger/parked?mode=test', { as: 'admin' });
  await r.call('GET', '/admin/ledger/export?account=demo&mode=test', { as: 'admin' });

  // Deliveries: wait until the log shows each delivered and nothing new arrives for 2 s.
  r.step = 'webhook deliveries';
  let last = -1;
  let stableSince = Date.now();
  await settle('webhook deliveries to finish', async () => {
    const log = await r.call('GET', `/v1/webhook_endpoints/${ctx.endpointId}/events?limit=100`, { as: 'seller', unrecorded: true });
    const done = log.status === 200 && log.body.items.every((d) => d.status !== 'pending');
    const count = ctx.received.length;
    if (count !== last || !done) {
      last = count;
      stableSince = Date.now();
      return false;
    }
    return Date.now() - stableSince >= 2000;
  }, 60_000);
  const deliveryLog = await r.call('GET', `/v1/webhook_endpoints/${ctx.endpointId}/events?limit=100`, { as: 'seller' });
  // Oldest first, by the log's order; a receipt's place is its event's.
  const order = deliveryLog.body.items.map((d) => d.event_id).reverse();
  const receipts = ctx.received
    .map((d) => {
      let body;
      try {
        body = JSON.parse(d.body);
      } catch {
        body = d.body;
      }
      const sig = /^t=(\d+),v1=([0-9a-f]+)$/.exec(d.headers['svc-signature'] ?? '');
      const valid = Boolean(sig) && crypto.createHmac('sha256', ctx.endpointSecret).update(`${sig[1]}.${d.body}`, 'utf8').digest('hex') === sig[2];
      return {
        method: d.method,
        path: d.url,
        headers: { 'content-type': d.headers['content-type'], 'user-agent': d.headers['user-agent'], 'svc-signature': sig ? 'present' : d.headers['svc-signature'] ?? null },
        signature_valid: valid,
        body,
        body_is_compact_json: typeof body === 'object' && JSON.stringify(body) === d.body,
      };
    })
    .sort((a, b) => order.indexOf(a.body && a.body.id) - order.indexOf(b.body && b.body.id) || JSON.stringify(a).localeCompare(JSON.stringify(b)));
  for (const receipt of receipts) r.note('webhook_delivery_received', receipt);
  await r.call('DELETE', `/v1/webhook_endpoints/${ctx.endpointId}`, { as: 'seller' });

  r.step = 'docs and probes';
  await r.call('GET', '/v1/openapi.json');
  await r.call('GET', '/readyz');

  return settledSteps;
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const logFile = `${args.output}.service.log`;
  await assertPortFree(args.port);
  build(args.checkout);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'walkthrough-data-'));
  const receiver = await startReceiver();
  const service = startService(args.checkout, args.port, dataDir, logFile);
  let failure;
  let recorder;
  try {
    const demoKey = await service.ready;
    const normalizer = new Normalizer();
    const baseUrl = `http://127.0.0.1:${args.port}`;
    normalizer.literal(`127.0.0.1:${receiver.port}`, '127.0.0.1:<hook_port>');
    normalizer.literal(`127.0.0.1:${args.port}`, '127.0.0.1:<port>');
    recorder = new Recorder(baseUrl, normalizer);
    recorder.credentials = { seller: demoKey, admin: adminTokenOf(dataDir), bogus: 'svc_test_' + 'x'.repeat(40) };
    const ctx = { hookUrl: `http://127.0.0.1:${receiver.port}/hooks`, received: receiver.received };
    const waited = await walkthrough(recorder, ctx);
    process.stderr.write(`${recorder.lines.length} lines recorded; waited for: ${waited.length ? waited.join('; ') : 'nothing'}\n`);
  } catch (error) {
    failure = error;
  } finally {
    const exit = await service.stop();
    receiver.server.close();
    if (!args.keepData) fs.rmSync(dataDir, { recursive: true, force: true });
    else process.stderr.write(`data dir kept: ${dataDir}\n`);
    if (recorder) fs.writeFileSync(args.output, recorder.lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    process.stderr.write(`service stopped (${exit.signal ?? `exit ${exit.code}`}); its output is in ${logFile}\n`);
  }
  if (failure) {
    process.stderr.write(`walk-through failed at step "${recorder ? recorder.step : 'start'}": ${failure.stack || failure}\n`);
    process.exit(1);
  }
  process.stderr.write(`wrote ${args.output}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
});
