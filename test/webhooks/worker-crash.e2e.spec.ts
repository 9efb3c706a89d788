import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { onPostgresServer } from '../support/database';
import { spawnWorker, startTestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { createEndpoint, deliveries, emit, ENCRYPTION_KEY, evtId, payoutPaid } from './helpers';
import { startReceiver } from './receiver';

/**
 * Issue 27: deliveries are claimed and recorded in batches. A worker process SIGKILLed with a
 * batch in flight (no shutdown hook runs) loses none of it: its leases run out and another
 * worker sends each delivery again, as a new attempt; and no attempt is ever sent twice.
 * Two processes cannot share the in-process PGlite, so this runs on a server.
 */
(onPostgresServer ? describe : describe.skip)('webhook batches across a SIGKILLed worker', () => {
  // A 3 s timeout: the batch is still in flight when the worker is killed (its lease, 6 s, then runs out).
  const env = { WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1', WEBHOOK_TIMEOUT_MS: '3000', WEBHOOK_ENCRYPTION_KEY: ENCRYPTION_KEY };
  let t: Awaited<ReturnType<typeof startTestApp>>;
  const workers: ChildProcess[] = [];
  let dataDir: string;

  beforeAll(async () => {
    // The API instance sends nothing: every delivery here is a worker process's.
    t = await startTestApp({ env: { ...env, WORKERS: 'false' } });
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-webhook-workers-'));
  });
  afterAll(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await t.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const startWorker = async (): Promise<ChildProcess> => {
    const worker = await spawnWorker(t.database, dataDir, env);
    workers.push(worker);
    return worker;
  };

  it('sends every delivery of a killed batch again, once per attempt, and loses none', async () => {
    let answering = false;
    const receiver = await startReceiver(() => (answering ? 204 : 'hang'));
    try {
      // The worker builds the read models too: it runs before the key and endpoint are made.
      const first = await startWorker();
      const { accountId, key } = await t.accountWithKey({ mode: 'test' });
      await eventually(async () => (await t.request('GET', '/v1/me', { key })).status === 200, 30000, 'the worker to project the key');
      const ep = await createEndpoint(t, key, receiver.url, ['payout.paid']);
      const ids: string[] = [];
      ids.push(...(await Promise.all(Array.from({ length: 40 }, (_, i) => emit(t, 'PayoutPaid', payoutPaid(accountId, 'test', 1000 + i))))).map((e) => e.id));
      // The whole batch is in flight to a receiver that does not answer.
      await eventually(() => receiver.received.length >= 40, 30000, 'the batch in flight');
      first.kill('SIGKILL');
      await new Promise((resolve) => first.once('exit', resolve));

      // More events while no worker runs.
      for (let i = 0; i < 10; i++) ids.push((await emit(t, 'PayoutPaid', payoutPaid(accountId, 'test', 2000 + i))).id);
      answering = true;
      await startWorker();

      const log = await eventually(async () => {
        const entries = await deliveries(t, key, ep.id);
        return entries.length === ids.length && entries.every((d) => d.status === 'succeeded') && entries;
      }, 60000, 'every delivery to succeed');
      expect(log.map((d) => d.event_id).sort()).toEqual(ids.map(evtId).sort());

      // No attempt was sent twice: per event, no more POSTs than attempts recorded (a claim
      // killed before its POST counts an attempt that sent nothing). The killed batch was
      // tried again; the events queued while no worker ran were sent once.
      const posts = new Map<string, number>();
      for (const e of receiver.events()) posts.set(e.id, (posts.get(e.id) ?? 0) + 1);
      const killed = new Set(ids.slice(0, 40).map(evtId));
      for (const d of log) {
        const sent = posts.get(d.event_id) ?? 0;
        expect({ event: d.event_id, fits: sent >= 1 && sent <= d.attempts }).toEqual({ event: d.event_id, fits: true });
        if (killed.has(d.event_id)) expect(d.attempts).toBeGreaterThanOrEqual(2);
        else expect({ attempts: d.attempts, sent }).toEqual({ attempts: 1, sent: 1 });
      }
    } finally {
      await receiver.close();
    }
  });
});
