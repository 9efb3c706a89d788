import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  path: string;
}

/**
 * A real HTTP receiver on 127.0.0.1. `respond` decides each answer (default 204); return
 * 'hang' to never answer, so the sender's timeout or shutdown is exercised.
 */
export async function startReceiver(respond: (r: Received, n: number) => number | 'hang' | { status: number; headers?: Record<string, string>; body?: string } = () => 204) {
  const received: Received[] = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const r = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), path: req.url ?? '' };
      received.push(r);
      const answer = respond(r, received.length);
      if (answer === 'hang') {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      const a = typeof answer === 'number' ? { status: answer } : answer;
      res.writeHead(a.status, a.headers).end(a.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    port,
    received,
    /** Parsed bodies of what arrived. */
    events: () => received.map((r) => JSON.parse(r.body)),
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
