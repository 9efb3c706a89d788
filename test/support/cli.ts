import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { runCli } from '../../src/cli/main';
import { ADMIN_TOKEN, TestApp } from './app';

/** Runs `svc ...argv` in-process, as an operator would from a shell. */
export async function svc(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, (s) => (stdout += s), (s) => (stderr += s));
  return { code, stdout, stderr };
}

/**
 * Serves the app on a loopback port and points the CLI's environment (SVC_URL,
 * ADMIN_TOKEN) at it; resolves to a function restoring the environment.
 */
export async function serveForCli(t: TestApp): Promise<() => void> {
  const saved = { SVC_URL: process.env.SVC_URL, ADMIN_TOKEN: process.env.ADMIN_TOKEN };
  await t.app.listen(0, '127.0.0.1');
  process.env.SVC_URL = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
  process.env.ADMIN_TOKEN = ADMIN_TOKEN;
  return () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}

/** A loopback port nothing listens on (for a service the test starts itself). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
