import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

/** `npm start` as a newcomer runs it: the built service, its output piped (not a terminal). */
function start(env: Record<string, string>, until?: RegExp): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-start-'));
  const childEnv: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, NODE_ENV: 'development', ...env };
  delete childEnv.DATABASE_URL; // the embedded store, as a first start is
  const child = spawn(process.execPath, [path.resolve('dist/src/main.js')], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
    if (until?.test(stdout)) child.kill('SIGTERM');
  });
  child.stderr.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      fs.rmSync(dataDir, { recursive: true, force: true });
      resolve({ code, stdout, stderr });
    }),
  );
}

describe('starting the service', () => {
  it('says in a few plain lines where it listens, what it stores in, and the demo key', async () => {
    const { stdout } = await start({ PORT: '0' }, /Try: {2}curl/);
    expect(stdout).toMatch(/serving http:\/\/127\.0\.0\.1:0\/v1 \(embedded Postgres in .*, local blob store; workers on\)/);
    expect(stdout).toMatch(/svc_test_[A-Za-z0-9]{40}/);
    expect(stdout).not.toMatch(/RouterExplorer|InstanceLoader|RoutesResolver/);
    // Piped to a file or a collector: no colour codes.
    expect(stdout).not.toContain('\u001b[');
    expect(stdout.trim().split('\n').length).toBeLessThan(12);
  });

  it('names PORT when the port is taken, and prints no demo key pointing at the other process', async () => {
    const other = net.createServer();
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const { port } = other.address() as net.AddressInfo;
    try {
      const { code, stdout, stderr } = await start({ PORT: String(port) });
      expect(code).toBe(1);
      expect(stderr).toContain(`configuration error: PORT ${port} is already in use on 127.0.0.1`);
      expect(stdout).not.toContain('svc_test_');
    } finally {
      other.close();
    }
  });

  it('names HOST when it is not an address of this machine, and prints no demo key', async () => {
    // 192.0.2.1 is TEST-NET-1 (RFC 5737): never assigned to this machine, so binding fails at once.
    const { code, stdout, stderr } = await start({ PORT: '0', HOST: '192.0.2.1' });
    expect(code).toBe(1);
    expect(stderr).toContain('configuration error: HOST "192.0.2.1" is not an address of this machine');
    expect(stdout).not.toContain('svc_test_');
  });

  it('names EVENTSTORE_URL in one line and exits non-zero when nothing answers there', async () => {
    const { code, stdout, stderr } = await start({ PORT: '0', EVENTSTORE_URL: 'esdb://127.0.0.1:1?tls=false' });
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([expect.stringMatching(/^configuration error: EVENTSTORE_URL "esdb:\/\/127\.0\.0\.1:1\?tls=false" did not answer/)]);
    expect(stdout).not.toContain('svc_test_');
  });

  it.each([
    [{ LOG_LEVEL: 'chatty' }, 'LOG_LEVEL must be one of'],
    [{ WEBHOOK_ENCRYPTION_KEY: 'not-a-key' }, 'WEBHOOK_ENCRYPTION_KEY must be 32 bytes'],
    [{ WORKERS: 'perhaps' }, 'WORKERS must be true or false'],
    [{ EVENTSTORE_URL: 'http://127.0.0.1:2113' }, 'EVENTSTORE_URL must be an EventStoreDB connection string'],
  ])('refuses %j in one line naming the variable, before anything is created', async (env, message) => {
    const { code, stdout, stderr } = await start(env);
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^configuration error: ${message}`))]);
    expect(stdout).toBe('');
  });
});
