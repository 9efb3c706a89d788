import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { startUpstream } from '../../bench/openai-upstream';

const ADMIN = 'shutdown-admin-token';

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });

/** SIGTERM, as an orchestrator stops an instance: what is in flight finishes, then the process exits 0. */
describe('graceful shutdown', () => {
  it('finishes a request in flight, refuses new connections, and exits 0', async () => {
    const upstream = await startUpstream({ tokens: 10 });
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-shutdown-'));
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(port), ADMIN_TOKEN: ADMIN, NODE_ENV: 'development', INFERENCE_UPSTREAM_URL: upstream.url };
    delete env.DATABASE_URL;
    const child = spawn(process.execPath, [path.resolve('dist/src/main.js')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const base = `http://127.0.0.1:${port}`;
    try {
      for (let i = 0; !/svc_test_\w{40}/.test(stdout); i++) {
        if (i > 600) throw new Error('the service did not start');
        await new Promise((r) => setTimeout(r, 100));
      }
      const admin = async (route: string, body: unknown) =>
        (await fetch(`${base}${route}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<any>;
      const account = await admin('/admin/accounts', { name: 'Shutdown Co', email: 'down@example.com' });
      const live = await admin('/admin/keys', { account: account.id, mode: 'live', tier: 'premium' });
      const paid = await fetch(live.activation_checkout_url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'card_number=4242424242424242' });
      expect(paid.status).toBe(200);
      const key = live.key as string;
      // A live streamed completion that takes about a second (10 chunks, 100 ms apart).
      const res = await fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'svc-fast-8b', messages: [{ role: 'user', content: '[slow:100] go' }], stream: true }),
      });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      await reader.read(); // the first chunk is here: the call is in flight
      child.kill('SIGTERM');
      let text = '';
      for (let r = await reader.read(); !r.done; r = await reader.read()) text += Buffer.from(r.value).toString();
      expect(text.trim().endsWith('data: [DONE]')).toBe(true);
      await expect(fetch(`${base}/v1/me`)).rejects.toThrow();
      const code = await exited;
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    } finally {
      child.kill('SIGKILL');
      await upstream.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});
