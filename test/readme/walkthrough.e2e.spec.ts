import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort } from '../support/cli';
import { EsdbStandIn } from '../support/esdb-standin';
import { eventually } from '../support/eventually';
import { writeLeRobotDataset } from '../support/lerobot-fixture';

/**
 * The README walk-through, run as written (issue 44): every command block of the README's
 * "Run it" sections (Run it, Sell and buy, the openai client, Generation jobs, the operator
 * CLI) is run, in README order, command by command, in one bash shell as a user would paste
 * them, against `npm start` on a fresh data directory. What the test changes, and why:
 *
 * - The service runs on a free port, not 3000 (other suites share the machine): `:3000` in a
 *   command becomes that port, and the shell has SVC_URL pointing at it (the CLI's default).
 * - The repo root is a scratch directory whose `bin`, `dist`, `src`, `node_modules`, ... are
 *   links to this checkout and whose `./data` is new: the README's `./data` is then fresh.
 *   `npm install` is not run again (the checkout is installed); `npm start` is.
 * - Placeholders (`svc_test_...`, `cs_test_...`, `pur_...`, `key_...`, ...) become the value
 *   the output before them printed, as a user copies it.
 * - Files the README says to save (chat.mjs, chat.py) are written from the block that follows
 *   the words "save this as"; `npm install openai` links this checkout's pinned devDependency.
 *   chat.py runs only where python3 has the `openai` package (not a dependency of this repo).
 * - The operator examples act on a few things the walk-through does not make (a disputed
 *   purchase, a webhook endpoint with a delivery, a dataset draft, ./episodes, a large file):
 *   operatorsWorld() makes them through the API first. `svc webhooks listen` gets a Ctrl-C
 *   after 4 s; `svc events copy` (service stopped) runs last, into the EventStoreDB stand-in.
 *
 * A command fails the test when it exits non-zero (bash's ERR trap), writes to stderr, or
 * prints an API error. "Test it" is the test suite's own commands and is not run here.
 */

const ROOT = path.resolve(__dirname, '../..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

interface Block {
  section: string;
  lang: string;
  text: string;
  /** The prose before the block, back to the previous block. */
  before: string;
}

/** The fenced blocks of the README with their section (the nearest ## or ### heading). */
function blocks(markdown: string): Block[] {
  const found: Block[] = [];
  let section = '';
  let prose = '';
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const heading = /^#{2,3} (.*)$/.exec(lines[i]);
    if (heading) {
      section = heading[1];
      prose = '';
      continue;
    }
    const fence = /^```(\w*)\s*$/.exec(lines[i]);
    if (!fence) {
      prose += `${lines[i]}\n`;
      continue;
    }
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i]);
    found.push({ section, lang: fence[1], text: body.join('\n'), before: prose });
    prose = '';
  }
  return found;
}

/** Sections whose blocks a user runs, in order; the others' blocks are named in NOT_RUN. */
const RUN_SECTIONS = ['Run it', 'Sell and buy in the sandbox', 'Publish a dataset from a folder', 'Chat inference with the `openai` client', 'Generation jobs', 'The operator CLI'];
/** Blocks that are not commands to run here, by section: why. */
const NOT_RUN: Record<string, string> = {
  'Test it': 'the test suite itself (npm test, the S3 pass): CI runs those',
  Layout: 'a directory listing, not commands',
  'Python client': "the Python client's own pass of .ci/run installs it with pip and runs its tests (clients/python/run-tests.sh)",
  'TypeScript SDK': "the SDK's own pass of .ci/run packs it, installs the tarball and runs its example and tests (clients/typescript/run-tests.sh)",
  'The `robomarket` CLI (creators and buyers)': "the SDK's pass runs the CLI from the installed tarball against a service (clients/typescript/test/cli.test.mjs) and checks npx from the tarball",
};

/** Settings that would point the service or the CLI elsewhere than the README's defaults. */
const CLEARED_ENV = [
  'DATABASE_URL', 'EVENTSTORE_URL', 'ADMIN_TOKEN', 'PUBLIC_BASE_URL', 'HOST', 'PORT', 'DATA_DIR', 'NODE_ENV', 'PAYMENTS', 'S3_BUCKET',
  'S3_ENDPOINT', 'S3_REGION', 'S3_FORCE_PATH_STYLE', 'CANONICAL_HOST', 'WEBHOOK_ENCRYPTION_KEY', 'WEBHOOK_RETRY_SCHEDULE', 'PLATFORM_FEE_BPS',
  'WORKERS', 'LOG_LEVEL', 'INFERENCE_UPSTREAM_URL', 'INFERENCE_UPSTREAM_KEY', 'INFERENCE_UPSTREAM_MODELS', 'SVC_URL', 'SVC_API_KEY',
  'TEST_EVENTSTORE', 'TEST_S3', 'STRIPE_API_BASE', 'NODE_OPTIONS', 'JEST_WORKER_ID',
];

function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of CLEARED_ENV) delete env[name];
  for (const name of Object.keys(env)) if (name.startsWith('npm_')) delete env[name];
  return { ...env, ...extra };
}

/** One bash a user types into: commands run one at a time, state (variables, aliases, cwd) kept. */
class Shell {
  private readonly child: ChildProcess;
  private stdout = '';
  private stderr = '';
  private n = 0;

  constructor(cwd: string, env: NodeJS.ProcessEnv, private readonly scratch: string) {
    this.child = spawn('bash', ['--norc', '--noprofile'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout!.on('data', (c) => (this.stdout += c.toString('utf8')));
    this.child.stderr!.on('data', (c) => (this.stderr += c.toString('utf8')));
    // Aliases as an interactive shell has them; a failing command says so on stderr.
    this.child.stdin!.write(`shopt -s expand_aliases\ntrap 'echo "command failed ($?): $BASH_COMMAND" >&2' ERR\n`);
  }

  /** Runs one command (as pasted: continuation lines and all); resolves with what it printed. */
  async run(command: string, timeoutMs = 120_000): Promise<{ stdout: string; stderr: string }> {
    const file = path.join(this.scratch, `step-${++this.n}.sh`);
    fs.writeFileSync(file, `${command}\n`);
    const marker = `__step_${this.n}_done__`;
    this.stdout = '';
    this.stderr = '';
    this.child.stdin!.write(`source ${file} </dev/null\necho ${marker}; echo ${marker} >&2\n`);
    const deadline = Date.now() + timeoutMs;
    while (!(this.stdout.includes(`${marker}\n`) && this.stderr.includes(`${marker}\n`))) {
      if (this.child.exitCode !== null) throw new Error(`the shell exited (${this.child.exitCode}) during: ${command}\n${this.stderr}`);
      if (Date.now() > deadline) throw new Error(`no end of "${command}" within ${timeoutMs} ms; so far:\n${this.stdout}\n${this.stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return { stdout: this.stdout.replace(`${marker}\n`, ''), stderr: this.stderr.replace(`${marker}\n`, '') };
  }

  close(): void {
    this.child.stdin!.end('exit\n');
  }
}

/** Commands of a sh block: one per logical line (continuations joined), comments and blanks dropped. */
function commandsOf(text: string): string[] {
  const commands: string[] = [];
  let current = '';
  for (const line of text.split('\n')) {
    current += current ? `\n${line}` : line;
    if (/\\$/.test(line)) continue;
    if (current.trim() && !/^\s*#/.test(current)) commands.push(current);
    current = '';
  }
  return commands;
}

describe('the README, run as written from a fresh data directory (issue 44)', () => {
  let port: number;
  let scratch: string;
  let checkout: string;
  let service: ChildProcess | undefined;
  let serviceLog = '';
  let shell: Shell;
  let demoKey: string;
  /** A webhook receiver of the operator examples' endpoint: answers 200, as a healthy one does. */
  let receiver: http.Server | undefined;
  /** Values printed so far that a placeholder stands for, newest last. */
  const seen: Record<string, string[]> = {};
  const remember = (kind: string, value: string) => (seen[kind] ??= []).push(value);
  const latest = (kind: string) => {
    const values = seen[kind];
    if (!values?.length) throw new Error(`no ${kind} printed before a command that needs one`);
    return values[values.length - 1];
  };

  beforeAll(async () => {
    port = await freePort();
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'readme-walk-'));
    checkout = path.join(scratch, 'repo');
    fs.mkdirSync(checkout);
    for (const entry of ['bin', 'dist', 'src', 'projections', 'node_modules', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'docs', 'examples']) {
      fs.symlinkSync(path.join(ROOT, entry), path.join(checkout, entry));
    }
  }, 30_000);

  afterAll(async () => {
    shell?.close();
    receiver?.close();
    if (service && service.exitCode === null && service.signalCode === null) {
      process.kill(-service.pid!, 'SIGTERM');
      await new Promise((resolve) => {
        const timer = setTimeout(() => {
          try {
            process.kill(-service!.pid!, 'SIGKILL');
          } catch {
            /* already gone */
          }
          resolve(undefined);
        }, 30_000);
        service!.once('exit', () => {
          clearTimeout(timer);
          resolve(undefined);
        });
      });
    }
    fs.rmSync(scratch, { recursive: true, force: true });
  }, 60_000);

  it('every block belongs to a section that runs, or is named as not run, and runs in order', async () => {
    const all = blocks(README);
    const unknown = all.filter((b) => !RUN_SECTIONS.includes(b.section) && !(b.section in NOT_RUN)).map((b) => `${b.section}: ${b.text.split('\n')[0]}`);
    expect(unknown).toEqual([]);
    const toRun = all.filter((b) => RUN_SECTIONS.includes(b.section));
    expect(toRun.length).toBeGreaterThanOrEqual(8);

    // Run it: `npm install && npm start`, the first block, is the start (install is done).
    expect(toRun[0]).toMatchObject({ section: 'Run it', text: 'npm install && npm start' });
    service = spawn('npm', ['start'], {
      cwd: checkout,
      env: cleanEnv({ PORT: String(port) }),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    demoKey = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no demo key printed within 240 s:\n${serviceLog}`)), 240_000);
      const read = (chunk: Buffer) => {
        serviceLog += chunk.toString('utf8');
        const key = /(svc_test_[A-Za-z0-9]{40})/.exec(serviceLog);
        if (key) {
          clearTimeout(timer);
          resolve(key[1]);
        }
      };
      service!.stdout!.on('data', read);
      service!.stderr!.on('data', read);
      service!.once('exit', (code) => reject(new Error(`npm start exited (${code}) before printing the demo key:\n${serviceLog}`)));
    });
    expect(fs.existsSync(path.join(checkout, 'data', 'admin_token'))).toBe(true);
    remember('svc_test', demoKey);

    // curl draws its progress meter on stderr when its output is not a terminal, as here: the
    // user's terminal shows none, so neither does this shell's curl (errors still show).
    fs.writeFileSync(path.join(scratch, '.curlrc'), 'no-progress-meter\n');
    const env = cleanEnv({ SVC_URL: `http://127.0.0.1:${port}`, CURL_HOME: scratch });
    shell = new Shell(checkout, env, scratch);
    let pendingFile: string | undefined;

    const failures: string[] = [];
    const deferred: string[] = [];
    for (const block of toRun.slice(1)) {
      if (block.section === 'The operator CLI') await operatorsWorld();
      // The user's LeRobot dataset the block uploads, as a Parquet writer and info.json make one.
      if (block.section === 'Publish a dataset from a folder') writeLeRobotDataset(path.join((await shell.run('pwd')).stdout.trim(), 'so100'));
      // Files the README says to save: written where the shell is, from the block itself.
      const saveAs = /save this as `([^`]+)`/.exec(block.before)?.[1];
      if (block.lang === 'js' || block.lang === 'python') {
        expect({ section: block.section, lang: block.lang, saveAs }).toEqual({ section: block.section, lang: block.lang, saveAs: expect.any(String) });
        const cwd = (await shell.run('pwd')).stdout.trim();
        fs.writeFileSync(path.join(cwd, saveAs!), `${block.text.replace(/:3000\b/g, `:${port}`)}\n`);
        if (/npm install openai/.test(block.before) && !fs.existsSync(path.join(cwd, 'node_modules', 'openai'))) {
          // `npm install openai`, offline: this checkout's pinned devDependency.
          fs.mkdirSync(path.join(cwd, 'node_modules'), { recursive: true });
          fs.symlinkSync(path.join(ROOT, 'node_modules', 'openai'), path.join(cwd, 'node_modules', 'openai'));
        }
        if (block.lang === 'python') pendingFile = saveAs;
        continue;
      }
      expect({ section: block.section, lang: block.lang }).toEqual({ section: block.section, lang: 'sh' });
      for (const written of commandsOf(block.text)) {
        // `svc events copy` wants the service stopped: run after the rest, below.
        if (/# service stopped/.test(written)) {
          deferred.push(written);
          continue;
        }
        await step(block.section, written, failures);
      }
    }

    // The Python snippet is the JS one's twin; it runs where Python has the openai package.
    if (pendingFile && spawnSync('python3', ['-c', 'import openai']).status === 0) {
      const result = await shell.run(`SVC_KEY=$SELLER python3 ${pendingFile}`);
      expect(result.stderr).toBe('');
      expect(result.stdout).toMatch(/completion_tokens/);
    } else if (pendingFile) {
      console.warn(`${pendingFile} not run: python3 has no openai package (pip install openai)`);
    }

    // The service stopped, the event log copied to EventStoreDB (the in-process stand-in, which
    // speaks its gRPC protocol, at the README's address's place).
    await stopService();
    const standIn = await new EsdbStandIn().start();
    try {
      for (const written of deferred) {
        await step('The operator CLI', written.replace(/esdb:\/\/127\.0\.0\.1:2113\?tls=false/, standIn.url), failures);
      }
    } finally {
      await standIn.stop();
    }
    expect(deferred).toHaveLength(1);
    expect(failures).toEqual([]);
    expect(checked).toEqual(new Set(CHECKS.map((c) => c.name)));
  }, 900_000);

  /** Runs one README command; what went wrong is added to failures (the walk goes on, to show them all). */
  async function step(section: string, written: string, failures: string[]): Promise<void> {
    let command = fill(written);
    // `svc webhooks listen` forwards until interrupted: here, Ctrl-C after a few seconds.
    if (/^svc webhooks listen /.test(written)) command = `set -m; ${command} &\nsleep 4; kill -INT $!; wait $!; set +m`;
    const result = await shell.run(command);
    const where = `${section}: ${written.split('\n')[0]}`;
    if (result.stderr) failures.push(`${where}\n  stderr: ${result.stderr}`);
    if (/"error":\s*\{/.test(result.stdout)) failures.push(`${where}\n  API error: ${result.stdout}`);
    learn(result.stdout);
    try {
      check(written, result.stdout);
    } catch (error) {
      failures.push(`${where}\n  ${(error as Error).message}`);
    }
  }

  /** The service's API, as the test (not the README) calls it. */
  async function api(method: string, route: string, token: string, body?: unknown, form?: Record<string, string>) {
    const response = await fetch(`http://127.0.0.1:${port}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : form ? new URLSearchParams(form).toString() : undefined,
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  }

  /**
   * What the operator CLI's examples act on beyond the walk-through, made as a user would
   * have made it: a disputed purchase (the sandbox's card 4000000000000259), a webhook endpoint
   * with a delivery, a dataset draft `bin-picking` and its ./episodes, and the large file.
   */
  async function operatorsWorld(): Promise<void> {
    const admin = fs.readFileSync(path.join(checkout, 'data', 'admin_token'), 'utf8').trim();
    receiver = http.createServer((req, res) => req.resume().on('end', () => res.end('ok')));
    await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    const endpoint = await api('POST', '/v1/webhook_endpoints', demoKey, { url: hookUrl, events: ['listing.purchased'], description: 'readme' });
    remember('we', endpoint.id);
    await api('POST', '/admin/accounts', admin, { name: 'Disputing Buyer', email: 'disputing@example.com' });
    const buyer = await api('POST', '/admin/keys', admin, { account: 'disputing-buyer', mode: 'test', scopes: ['models:read'] });
    const session = await api('POST', '/v1/purchases', buyer.key, { asset: 'grasp-policy' });
    const paid = await fetch(new URL(session.checkout_url).href.replace(/:\d+\//, `:${port}/`), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'card_number=4000000000000259',
    });
    expect(paid.status).toBe(200);
    // Delivered (not pending): `svc webhooks resend` attempts it again now.
    const delivery = await eventually(
      async () => (await api('GET', `/v1/webhook_endpoints/${endpoint.id}/events`, demoKey)).items.find((d: { status: string }) => d.status !== 'pending'),
      30_000,
      'a webhook delivery',
    );
    remember('whd', delivery.id);
    await api('POST', '/v1/datasets', demoKey, { title: 'Bin Picking', type: 'dataset', price_cents: 0 });
    const cwd = (await shell.run('pwd')).stdout.trim();
    fs.mkdirSync(path.join(cwd, 'episodes'));
    for (const n of [1, 2]) fs.writeFileSync(path.join(cwd, 'episodes', `episode-${n}.jsonl`), `${JSON.stringify({ episode: n, steps: [] })}\n`);
    fs.writeFileSync(path.join(cwd, 'policy-7b.safetensors'), Buffer.alloc(2 * 1024 * 1024, 7));
  }

  async function stopService(): Promise<void> {
    if (!service || service.exitCode !== null || service.signalCode !== null) return;
    const exited = new Promise((resolve) => service!.once('exit', resolve));
    process.kill(-service.pid!, 'SIGTERM');
    await exited;
  }

  /** The README's placeholders, filled as a user copies values from the output before them. */
  function fill(command: string): string {
    return command
      .replace(/:3000\b/g, `:${port}`)
      .replace(/^SELLER=svc_test_\.\.\./m, () => `SELLER=${demoKey}`)
      .replace(/svc_test_\.\.\./g, () => latest('svc_test'))
      .replace(/cs_test_\.\.\./g, () => latest('cs_test'))
      .replace(/\bkey_\.\.\./g, () => latest('key'))
      .replace(/\bpur_\.\.\./g, () => latest('pur'))
      .replace(/\bsbx_dp_\.\.\./g, () => latest('sbx_dp'))
      .replace(/\bwe_\.\.\./g, () => latest('we'))
      .replace(/\bwhd_\.\.\./g, () => latest('whd'))
      // A connected Stripe account's id: the sandbox records the destination without calling Stripe.
      .replace(/\bacct_\.\.\./g, 'acct_1ReadmeWalkThrough');
  }

  /** Values a later command's placeholder stands for. */
  function learn(stdout: string): void {
    for (const m of stdout.matchAll(/\bkey: (svc_test_[A-Za-z0-9]{40})/g)) remember('svc_test', m[1]);
    for (const m of stdout.matchAll(/"id":"(cs_test_[A-Za-z0-9]+)"/g)) remember('cs_test', m[1]);
    for (const m of stdout.matchAll(/^id: (key_[A-Za-z0-9]+)$/gm)) remember('key', m[1]);
    for (const m of stdout.matchAll(/"id":"(pur_[A-Za-z0-9]+)"/g)) remember('pur', m[1]);
    for (const m of stdout.matchAll(/\b(sbx_dp_[A-Za-z0-9]+)\b/g)) remember('sbx_dp', m[1]);
  }

  /** What the README's comments promise, checked where the command says it. */
  const CHECKS: { name: string; when: RegExp; then: (stdout: string) => void }[] = [
    {
      name: '/v1/me: the demo key, premium and unrestricted',
      when: /\/v1\/me$/,
      then: (out) => expect(JSON.parse(out).key).toEqual({ id: expect.stringMatching(/^key_/), mode: 'test', tier: 'premium', scopes: [], expires_at: null }),
    },
    { name: 'a new demo key', when: /keys create --account demo/, then: (out) => expect(out).toMatch(/key: svc_test_[A-Za-z0-9]{40}/) },
    { name: 'the purchase opens a checkout', when: /v1\/purchases -H[\s\S]* -d /, then: (out) => expect(JSON.parse(out)).toMatchObject({ object: 'checkout_session', status: 'requires_payment' }) },
    {
      name: 'the sale, 2125 net, pending',
      when: /balance_transactions/,
      then: (out) => expect(JSON.parse(out).items).toEqual([expect.objectContaining({ type: 'sale', net_cents: 2125, status: 'pending' })]),
    },
    { name: 'available 2125', when: /v1\/balance -H/, then: (out) => expect(JSON.parse(out)).toMatchObject({ available_cents: 2125 }) },
    { name: 'payouts paused', when: /payouts pause --account demo/, then: (out) => expect(out).toContain('are paused') },
    {
      name: 'the export: the sale paid, and the payout',
      when: /ledger export --account demo/,
      then: (out) => {
        const [header, ...rows] = out.trim().split('\n');
        expect(header.split(',').slice(0, 7)).toEqual(['id', 'type', 'amount_cents', 'fee_cents', 'net_cents', 'currency', 'status']);
        expect(rows.map((r) => r.split(',').slice(1, 7))).toEqual([
          ['sale', '2500', '375', '2125', 'usd', 'paid'],
          ['payout', '-2125', '0', '-2125', 'usd', 'paid'],
        ]);
      },
    },
    {
      name: 'the report of a period with nothing booked: no figures, no payouts, exit 0',
      when: /ledger report --mode live/,
      then: (out) => {
        expect(out).toContain('ledger report, live mode, 2026-09-01T00:00:00.000Z .. 2026-10-01T00:00:00.000Z (to exclusive)');
        expect(out).toContain('payouts (0)');
      },
    },
    { name: 'chat.mjs streams an answer', when: /node chat\.mjs/, then: (out) => expect(out.trim().length).toBeGreaterThan(20) },
    {
      name: 'the job asks a question',
      when: /^wait_for awaiting_clarification/,
      then: (out) => expect(JSON.parse(out)).toMatchObject({ stage: 'awaiting_clarification', questions: [expect.objectContaining({ id: 'dof' })] }),
    },
    { name: 'the answer moves it on', when: /clarify/, then: (out) => expect(JSON.parse(out).stage).toBe('planning') },
    { name: 'a dispute settled', when: /disputes close .* --won/, then: (out) => expect(out).toMatch(/^dispute sbx_dp_\w+ won/) },
    { name: 'svc upload prints file_extension', when: /^svc upload \.\/policy\.onnx/, then: (out) => expect(out).toContain('file_extension: .onnx') },
    { name: 'webhooks listen stops on Ctrl-C', when: /webhooks listen/, then: (out) => expect(out).toMatch(/forwarded \d+ deliveries; endpoint we_\w+ deleted/) },
    { name: 'the job publishes', when: /^job .*\/publish/, then: (out) => expect(JSON.parse(out)).toMatchObject({ stage: 'published', listing: { status: 'published' } }) },
  ];
  const checked = new Set<string>();
  function check(written: string, stdout: string): void {
    for (const c of CHECKS) {
      if (!c.when.test(written)) continue;
      checked.add(c.name);
      try {
        c.then(stdout);
      } catch (error) {
        throw new Error(`${c.name} (${written}):\n${stdout}\n${(error as Error).message}`);
      }
    }
  }
});
