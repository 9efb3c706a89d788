import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { spawnWorker, startTestApp } from '../support/app';
import { freePort } from '../support/cli';
import { onPostgresServer } from '../support/database';
import { eventually } from '../support/eventually';
import { recordedOfType } from '../support/events';
import { ENCRYPTION_KEY } from '../webhooks/helpers';

/** Short leases: a killed instance's keys (and projections) are free again within a second. */
const env = { WEBHOOK_ENCRYPTION_KEY: ENCRYPTION_KEY, CONSUMER_LEASE_TTL_MS: '1000' };

/**
 * A service process SIGKILLed in the middle of a request sent with an Idempotency-Key: the
 * keys it had answered still replay (from another instance, and from the process started
 * again), and the key of the request it died in is retryable once its lease has passed: the
 * retry runs, and no answer that never happened is ever replayed. Two processes cannot share
 * PGlite, and the request is held inside the event store's append by a lock on its streams
 * table, so this runs on the Postgres server with the events in Postgres.
 */
const runs = onPostgresServer && process.env.TEST_EVENTSTORE !== 'standin';
(runs ? describe : describe.skip)('Idempotency-Key across kill -9', () => {
  let t: Awaited<ReturnType<typeof startTestApp>>;
  let creator: { accountId: string; key: string };
  let worker: ChildProcess | undefined;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-idem-'));

  beforeAll(async () => {
    t = await startTestApp({ env });
    creator = await t.accountWithKey({ scopes: ['datasets:upload'] });
  });
  afterAll(async () => {
    worker?.kill('SIGKILL');
    await t.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function startWorker(): Promise<string> {
    const port = await freePort();
    worker = await spawnWorker(t.database, dataDir, { ...env, PORT: String(port), HOST: '127.0.0.1' });
    const base = `http://127.0.0.1:${port}`;
    await eventually(async () => (await fetch(`${base}/healthz`).catch(() => undefined))?.status === 200, 60000, 'the worker to listen');
    return base;
  }

  const draftAt = (base: string, title: string, idempotencyKey: string) =>
    fetch(`${base}/v1/datasets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${creator.key}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
      body: JSON.stringify({ title, type: 'dataset', price_cents: 0 }),
    });
  const draftHere = (title: string, idempotencyKey: string) =>
    t.request('POST', '/v1/datasets', { key: creator.key, body: { title, type: 'dataset', price_cents: 0 }, headers: { 'idempotency-key': idempotencyKey } });
  const drafted = async (title: string) => (await recordedOfType(t, 'ListingDrafted')).filter((e) => e.data.details.title === title);

  it('replays what was answered and lets the interrupted key run again once, after the process is SIGKILLed mid-request', async () => {
    let base = await startWorker();
    const answered = await draftAt(base, 'Before the kill', 'crash-1');
    expect(answered.status).toBe(201);
    const answeredText = await answered.text();

    // Appends wait on this lock: the next request takes its key, then stops inside its append.
    const locker = new Client({ connectionString: t.database.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE streams IN EXCLUSIVE MODE');
      const interrupted = draftAt(base, 'Killed mid-request', 'crash-2').catch((error) => error);
      await eventually(async () => {
        const { rows } = await t.db.query<{ waiting: string }>(
          "SELECT count(*) AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        );
        return Number(rows[0].waiting) > 0;
      }, 30000, 'the request to wait inside its append');
      const { rows: held } = await t.db.query("SELECT status, owner FROM idempotency_keys WHERE key = 'crash-2'");
      expect(held).toEqual([{ status: null, owner: expect.any(String) }]);

      worker!.kill('SIGKILL');
      await new Promise((resolve) => worker!.once('exit', resolve));
      // The caller got no answer: its connection closed.
      expect(String(await interrupted)).toMatch(/fetch failed/);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }

    // Another instance replays the answered key byte for byte.
    const replay = await draftHere('Before the kill', 'crash-1');
    expect([replay.status, replay.text, replay.headers['idempotent-replayed']]).toEqual([201, answeredText, 'true']);

    // The interrupted key never answered: no stored answer, and once the dead process's
    // lease has passed the retry runs (not a replay), exactly once.
    const retried = await eventually(async () => {
      const res = await draftHere('Killed mid-request', 'crash-2');
      if (res.status === 409) return false;
      return res;
    }, 15000, 'the interrupted key to be free');
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(await drafted('Killed mid-request')).toHaveLength(1);
    expect(await drafted('Before the kill')).toHaveLength(1);

    // The process started again replays both.
    base = await startWorker();
    const again1 = await draftAt(base, 'Before the kill', 'crash-1');
    expect([again1.status, await again1.text(), again1.headers.get('idempotent-replayed')]).toEqual([201, answeredText, 'true']);
    const again2 = await draftAt(base, 'Killed mid-request', 'crash-2');
    expect([again2.status, await again2.text(), again2.headers.get('idempotent-replayed')]).toEqual([201, retried.text, 'true']);
    expect(await drafted('Killed mid-request')).toHaveLength(1);
  });
});
