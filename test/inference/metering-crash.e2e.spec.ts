import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import OpenAI from 'openai';
import { Client } from 'pg';
import { svc } from '../support/cli';
import { eventually } from '../support/eventually';
import { createTestDatabase, TestDatabase } from '../support/database';

const ADMIN = 'crash-admin-token';

/** Blocks inserts into the event log for `ms` from another session; resolves when released. */
async function holdAppends(url: string, ms: number): Promise<Promise<void>> {
  const session = new Client({ connectionString: url });
  await session.connect();
  await session.query('BEGIN');
  await session.query('LOCK TABLE events IN SHARE ROW EXCLUSIVE MODE');
  return new Promise((resolve) => setTimeout(() => session.query('COMMIT').then(() => session.end()).then(resolve), ms));
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });

/**
 * Metering is durable: a call whose answer reached the caller is in usage even when the
 * process is killed (SIGKILL, no shutdown hooks) the moment the last answer arrives.
 */
describe('metering survives a killed process', () => {
  let database: TestDatabase | undefined;
  let dataDir: string;
  let child: ChildProcess | undefined;
  let base: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-metering-'));
    if (process.env.DATABASE_URL) database = await createTestDatabase();
    base = `http://127.0.0.1:${await freePort()}`;
  });
  afterAll(async () => {
    child?.kill('SIGKILL');
    await database?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function start(): Promise<void> {
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN, PORT: new URL(base).port, NODE_ENV: 'development' };
    if (database) env.DATABASE_URL = database.url;
    else delete env.DATABASE_URL;
    child = spawn(process.execPath, [path.resolve('dist/src/main.js')], { env, stdio: 'ignore' });
    for (let i = 0; i < 300; i++) {
      try {
        if ((await fetch(`${base}/v1/me`)).status === 401) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the service did not start');
  }

  async function admin(method: string, route: string, body?: unknown) {
    const res = await fetch(`${base}${route}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return (await res.json()) as any;
  }

  it('keeps every answered call in usage, and svc usage, the API and the event log agree', async () => {
    await start();
    const account = await admin('POST', '/admin/accounts', { name: 'Crash Co', email: 'crash@example.com' });
    const key = (await admin('POST', '/admin/keys', { account: account.id, mode: 'test', tier: 'premium' })).key;
    const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: key, maxRetries: 0 });

    // On a Postgres server, appends are held back for a while: an answer that did not wait
    // for its metering would arrive before its event is stored, and the kill would lose it.
    const held = database && (await holdAppends(database.url!, 1500));
    const calls = Array.from({ length: 16 }, async (_, i) => {
      const request = { model: i % 2 ? 'svc-fast-8b' : 'svc-reason-70b', messages: [{ role: 'user' as const, content: `call ${i}` }] };
      if (i % 3 === 0) {
        const stream = await client.chat.completions.create({ ...request, stream: true, stream_options: { include_usage: true } });
        let usage: OpenAI.CompletionUsage | undefined | null;
        for await (const chunk of stream) usage = chunk.usage ?? usage;
        return usage!;
      }
      return (await client.chat.completions.create(request)).usage!;
    });
    const usages = await Promise.all(calls);
    child!.kill('SIGKILL');
    await new Promise((resolve) => child!.once('exit', resolve));
    await held;

    await start();
    // The restarted projections catch up from the log; then every call is there, once.
    const usageNow = async (): Promise<any> => (await fetch(`${base}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json();
    const usage = await eventually(async () => {
      const u = await usageNow();
      return u.summary.calls >= 16 && u;
    }, 30_000, 'the usage projection to catch up after the restart');
    expect(usage.summary.calls).toBe(16);
    expect(usage.summary.total_tokens).toBe(usages.reduce((n, u) => n + u.total_tokens, 0));

    const saved = { SVC_URL: process.env.SVC_URL, ADMIN_TOKEN: process.env.ADMIN_TOKEN };
    process.env.SVC_URL = base;
    process.env.ADMIN_TOKEN = ADMIN;
    try {
      const cli = await svc('usage', '--account', account.id, '--mode', 'test', '--json');
      expect(cli.code).toBe(0);
      expect(JSON.parse(cli.stdout)).toEqual(usage);
      const verify = await svc('usage', 'verify', '--json');
      expect(verify.code).toBe(0);
      expect(JSON.parse(verify.stdout)).toMatchObject({ ok: true, calls_checked: 16 });
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  }, 120_000);
});
