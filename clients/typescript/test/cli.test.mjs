/**
 * The `robomarket` CLI, run as npm linked it from the installed tarball
 * (node_modules/.bin/robomarket), against the service run-tests.sh started on its own port:
 * login writes a 0600 config; a creator publishes with it and a buyer buys and downloads;
 * `listen --forward-to` with the creator's key only forwards the buyer's purchase to a local
 * receiver that verifies it with constructEvent; a bad key is a clear error; every --help
 * describes every option.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { constructEvent } from '@robotics-marketplace/sdk';
import { ROOT, jsonlEpisode, pay, receiver, sha256, stopService, theService } from './support.mjs';

const pkgDir = path.dirname(fileURLToPath(import.meta.resolve('@robotics-marketplace/sdk/package.json')));
const BIN = path.resolve(pkgDir, '../../.bin/robomarket');
// The same installed dist/cli.js in this process, for the many calls whose process adds nothing to test (faster in CI).
const { runCli } = createRequire(import.meta.url)(path.join(pkgDir, 'dist/cli.js'));

let svc;
let tmp;

before(async () => {
  svc = await theService();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ts-cli-'));
});

after(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
  stopService();
});

const unique = () => randomUUID().slice(0, 8);

/** The environment of a user with the key in SVC_API_KEY and a config directory of their own. */
function envOf(key, extra = {}) {
  const env = { ...process.env, XDG_CONFIG_HOME: path.join(tmp, `config-${unique()}`), SVC_BASE_URL: svc.base_url, ...extra };
  delete env.SVC_URL;
  if (key) env.SVC_API_KEY = key;
  else delete env.SVC_API_KEY;
  return env;
}

/** Runs the installed bin; `{ code, stdout, stderr }`. */
function cli(args, { env = envOf(svc.seller_key), input } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}

/** The installed CLI's runCli in this process: `{ code, stdout, stderr }`. */
async function inProcess(args, { env = envOf(svc.seller_key) } = {}) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, (t) => (stdout += t), (t) => (stderr += t), env);
  return { code, stdout, stderr };
}

/** Runs it (in this process) and parses its --json answer, failing with its stderr when it did not succeed. */
async function json(args, options) {
  const run = await inProcess([...args, '--json'], options);
  assert.equal(run.code, 0, `robomarket ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

describe('robomarket --help', () => {
  it('lists every command, and the --help of each describes each of its options', async () => {
    const top = await cli(['--help']);
    assert.equal(top.code, 0);
    const commands = [...top.stdout.matchAll(/^ {2}([a-z]+(?: [a-z]+)*)(?: [<[]|\s{2,})/gm)].map((m) => m[1]);
    for (const wanted of ['login', 'models create', 'models download', 'datasets upload', 'datasets download', 'uploads file', 'purchases create', 'purchases list', 'balance', 'transactions list', 'webhooks endpoints create', 'webhooks endpoints list', 'events list', 'listen']) {
      assert.ok(commands.includes(wanted), `${wanted} is not in the top help:\n${top.stdout}`);
    }
    const helps = {};
    for (const command of commands) helps[command] = await inProcess([...command.split(' '), '--help']);
    // As a process too: the same text, on stdout, exit 0.
    assert.deepEqual(await cli(['listen', '--help']), helps.listen);
    for (const command of commands) {
      const { code, stdout } = helps[command];
      assert.equal(code, 0, command);
      assert.match(stdout, new RegExp(`^robomarket ${command}\\b`), command);
      const section = stdout.split('\nOptions:\n')[1];
      assert.ok(section, `${command} --help has no Options section`);
      const lines = section.trimEnd().split('\n');
      // Each option on a line of its own with its description: "  --name [ARG]  what it does".
      for (const line of lines) assert.match(line, /^ {2}--[a-z-]+(?: [A-Z,-]+)? {2,}\S.{8,}$/, `${command}: ${line}`);
      const names = lines.map((l) => l.trim().split(' ')[0]);
      for (const common of ['--json', '--help', '--api-key', '--base-url']) assert.ok(names.includes(common), `${command} lacks ${common}`);
    }
    const options = (command) => helps[command].stdout.split('\nOptions:\n')[1];
    for (const o of ['--forward-to URL', '--events', '--since', '--secret', '--interval']) assert.ok(options('listen').includes(o), o);
    for (const o of ['--file PATH', '--type', '--title', '--price-cents', '--license']) assert.ok(options('models create').includes(o), o);
    assert.ok(options('datasets upload').includes('--dataset ID'));
  });

  it('refuses an unknown option, a missing required one and an unknown command with exit code 2 and the usage', async () => {
    const unknown = await inProcess(['models', 'list', '--colour']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /Unknown option '--colour'/);
    assert.match(unknown.stderr, /--limit N/);
    const missing = await inProcess(['listen']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /missing --forward-to/);
    const nothing = await cli(['modles']);
    assert.equal(nothing.code, 2);
    assert.match(nothing.stderr, /unknown command "modles"/);
  });
});

describe('robomarket login', () => {
  it('checks the key, stores it with the base URL in $XDG_CONFIG_HOME/robomarket/config.json, mode 0600, and later commands use it', async () => {
    const env = envOf(undefined);
    delete env.SVC_BASE_URL;
    const dir = path.join(env.XDG_CONFIG_HOME, 'robomarket');
    const file = path.join(dir, 'config.json');
    // A config left readable by others (an older tool, a copy): login replaces it with a 0600 one.
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(file, '{}\n', { mode: 0o644 });
    fs.chmodSync(file, 0o644);

    // The key on stdin, not in argv.
    const login = await cli(['login', '--base-url', svc.base_url], { env, input: `${svc.seller_key}\n` });
    assert.equal(login.code, 0, login.stderr);
    assert.match(login.stdout, /^Logged in to \S+ as .*, test mode\)/);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')), { api_key: svc.seller_key, base_url: svc.base_url });
    assert.doesNotMatch(login.stdout + login.stderr, new RegExp(svc.seller_key));

    // No SVC_API_KEY, no SVC_BASE_URL: the stored key and URL.
    const me = await json(['whoami'], { env });
    assert.equal(me.key.mode, 'test');

    // A bad key is refused before anything is stored: the good one stays.
    const bad = await cli(['login', '--api-key', 'svc_test_notakey'], { env });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^error: \w+: .+\n {2}status 401, request \S+/);
    assert.equal(JSON.parse(fs.readFileSync(file, 'utf8')).api_key, svc.seller_key);

    // SVC_API_KEY wins over the stored key.
    const buyerMe = await json(['whoami'], { env: { ...env, SVC_API_KEY: svc.buyer_key } });
    assert.notEqual(buyerMe.id, me.id);

    const logout = await inProcess(['logout'], { env });
    assert.equal(logout.code, 0);
    assert.equal(JSON.parse(fs.readFileSync(file, 'utf8')).api_key, undefined);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    const none = await cli(['balance'], { env });
    assert.equal(none.code, 2);
    assert.match(none.stderr, /no API key: set SVC_API_KEY/);
  });
});

describe('errors', () => {
  it('a bad key prints the code, the message and the request id, and exits 1; --json prints them as JSON', async () => {
    const env = envOf('svc_test_thiskeydoesnotexist');
    const run = await cli(['balance'], { env });
    assert.equal(run.code, 1);
    assert.equal(run.stdout, '');
    const [, code, message, requestId] = /^error: ([a-z_]+): (.+)\n {2}status 401, request (\S+)\n$/.exec(run.stderr) ?? [];
    assert.ok(code && message && requestId, run.stderr);
    const asJson = await inProcess(['models', 'get', 'anything', '--json'], { env });
    assert.equal(asJson.code, 1);
    const { error } = JSON.parse(asJson.stderr);
    assert.equal(error.status, 401);
    assert.equal(error.code, code);
    assert.match(error.request_id, /\S+/);
    assert.ok(error.message);

    const missing = await inProcess(['models', 'get', `no-such-model-${unique()}`]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^error: not_found: .+\n {2}status 404, request \S+/);
  });
});

describe('a creator and a buyer with the CLI', () => {
  it('publishes, listens with the creator key only, and the buyer\'s purchase is forwarded once, verified by constructEvent', async () => {
    const seller = envOf(svc.seller_key);
    const buyer = envOf(svc.buyer_key);
    const weights = fs.readFileSync(path.join(ROOT, 'examples/policy.onnx'));
    const title = `CLI Policy ${unique()}`;
    // The creator publishes through the installed bin, as a process.
    const publish = await cli(['models', 'create', '--file', path.join(ROOT, 'examples/policy.onnx'), '--title', title, '--type', 'onnx-model', '--license', 'MIT', '--price-cents', '1900', '--tags', 'cli,test', '--json'], { env: seller });
    assert.equal(publish.code, 0, publish.stderr);
    const model = JSON.parse(publish.stdout);
    assert.equal(model.title, title);
    assert.deepEqual(model.price, { amount: 1900, currency: 'usd' });
    assert.equal(model.file.sha256, sha256(weights));
    assert.equal((await json(['models', 'get', model.slug], { env: buyer })).id, model.id);
    const published = (await json(['events', 'list', '--type', 'listing.published', '--limit', '5'], { env: seller })).find((e) => e.data.listing?.slug === model.slug);
    assert.ok(published, 'the publish is an event of the seller');

    const hooks = await receiver();
    // The seller's key only (no admin token in its environment), the service on its own port.
    const listenEnv = { ...seller };
    delete listenEnv.ADMIN_TOKEN;
    const listener = spawn(BIN, ['listen', '--forward-to', hooks.url, '--interval', '0.2', '--json'], { env: listenEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let errText = '';
    listener.stderr.on('data', (c) => (errText += c));
    const exited = new Promise((resolve) => listener.once('exit', (code, signal) => resolve({ code, signal })));
    try {
      const ready = await new Promise((resolve, reject) => {
        listener.stdout.on('data', (c) => {
          out += c;
          if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]));
        });
        exited.then(() => reject(new Error(`listen exited: ${errText}`)));
      });
      assert.equal(ready.object, 'listen');
      assert.match(ready.secret, /^whsec_/);

      // The buyer buys in the sandbox checkout, with the CLI.
      const session = await json(['purchases', 'create', model.slug], { env: buyer });
      assert.equal(session.amount_cents, 1900);
      assert.equal(await pay(session.checkout_url), 200);

      const { body, header } = await hooks.waitFor((e) => e.type === 'listing.purchased' && e.data.listing.slug === model.slug);
      const event = constructEvent(body, header, ready.secret);
      assert.equal(event.type, 'listing.purchased');
      assert.throws(() => constructEvent(body, header, 'whsec_other'), /no v1 signature matches/);
      const bought = await json(['purchases', 'list', '--limit', '5'], { env: buyer });
      assert.equal(event.data.purchase.id, bought.find((p) => p.asset.slug === model.slug).id);

      // More polls go by: nothing twice, nothing from before it started.
      await new Promise((r) => setTimeout(r, 1000));
      const ids = hooks.deliveries.map((d) => JSON.parse(d.body).id);
      assert.equal(new Set(ids).size, ids.length, `forwarded twice: ${ids}`);
      assert.ok(!ids.includes(published.id), 'an event from before listen started was forwarded');
      const lines = out.trim().split('\n').slice(1).map((l) => JSON.parse(l));
      assert.ok(lines.some((l) => l.object === 'forward' && l.id === event.id && l.status === 204), out);
    } finally {
      listener.kill('SIGTERM');
      assert.deepEqual(await exited, { code: 0, signal: null });
      await hooks.close();
    }

    // --since: the past from then on too (the publish, made before), filtered by --events; a bad key stops it at once.
    const replay = await receiver();
    const again = spawn(BIN, ['listen', '--forward-to', replay.url, '--since', String(published.created), '--events', 'listing.published', '--interval', '0.2'], { env: listenEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let line = '';
    again.stdout.on('data', (c) => (line += c));
    const againExited = new Promise((resolve) => again.once('exit', (code, signal) => resolve({ code, signal })));
    try {
      const { body, header } = await replay.waitFor((e) => e.id === published.id);
      const secret = /Your webhook signing secret is (whsec_\S+)/.exec(line)?.[1];
      assert.ok(secret, line);
      assert.equal(constructEvent(body, header, secret).data.listing.slug, model.slug);
      assert.ok(replay.deliveries.every((d) => JSON.parse(d.body).type === 'listing.published'));
    } finally {
      again.kill('SIGTERM');
      assert.deepEqual(await againExited, { code: 0, signal: null });
      await replay.close();
    }
    const refused = await cli(['listen', '--forward-to', 'http://127.0.0.1:9/hooks'], { env: envOf('svc_test_thiskeydoesnotexist') });
    assert.equal(refused.code, 1);
    assert.equal(refused.stdout, '');
    assert.match(refused.stderr, /^error: \w+: .+\n {2}status 401, request \S+/);

    // The buyer downloads, checked; the seller sees the sale.
    const outDir = path.join(tmp, `models-${unique()}/`);
    const got = await json(['models', 'download', model.slug, '--out', outDir], { env: buyer });
    assert.equal(sha256(fs.readFileSync(got.path)), sha256(weights));
    const sales = await json(['transactions', 'list', '--type', 'sale', '--limit', '10'], { env: seller });
    assert.ok(sales.some((t) => t.source?.asset?.slug === model.slug), JSON.stringify(sales));
    const balance = await json(['balance'], { env: seller });
    assert.equal(balance.object, 'balance');
    const text = await inProcess(['balance'], { env: seller });
    assert.match(text.stdout, /^available \d+\.\d\d USD/);
  });

  it('a dataset from a directory, downloaded whole; an upload and a webhook endpoint', async () => {
    const seller = envOf(svc.seller_key);
    const src = path.join(tmp, `episodes-${unique()}`);
    fs.mkdirSync(src);
    for (let i = 0; i < 3; i++) fs.writeFileSync(path.join(src, `episode_${i}.jsonl`), jsonlEpisode(i, 20, Buffer.from(unique())));
    const draft = await json(['datasets', 'create', '--title', `CLI Episodes ${unique()}`, '--description', 'three episodes'], { env: seller });
    const up = await json(['datasets', 'upload', src, '--dataset', draft.id, '--publish'], { env: seller });
    assert.deepEqual([up.uploaded.length, up.count, up.published.slug], [3, 3, draft.slug]);
    const again = await json(['datasets', 'upload', src, '--dataset', draft.id], { env: seller });
    assert.deepEqual([again.uploaded.length, again.skipped], [0, 3]);
    const dest = path.join(tmp, `dl-${unique()}`);
    const down = await json(['datasets', 'download', draft.slug, dest], { env: envOf(svc.buyer_key) });
    assert.equal(down.files.length, 3);
    for (const f of fs.readdirSync(src)) assert.equal(sha256(fs.readFileSync(path.join(dest, f))), sha256(fs.readFileSync(path.join(src, f))));

    const file = path.join(tmp, `policy-${unique()}.onnx`);
    fs.copyFileSync(path.join(ROOT, 'examples/policy.onnx'), file);
    const uploaded = await json(['uploads', 'file', file], { env: seller });
    assert.equal(uploaded.file_size, fs.statSync(file).size);
    assert.match(uploaded.storage_path, /\S/);

    const endpoint = await json(['webhooks', 'endpoints', 'create', '--url', 'https://example.com/hooks', '--events', 'payout.paid,listing.purchased'], { env: seller });
    assert.match(endpoint.secret, /^whsec_/);
    const endpoints = await json(['webhooks', 'endpoints', 'list', '--all'], { env: seller });
    assert.ok(endpoints.some((e) => e.id === endpoint.id && e.secret === undefined));
    await fetch(`${svc.base_url}/v1/webhook_endpoints/${endpoint.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${svc.seller_key}` } });
  });
});
