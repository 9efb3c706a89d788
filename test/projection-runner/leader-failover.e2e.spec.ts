import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { onPostgresServer } from '../support/database';
import { spawnWorker, startTestApp } from '../support/app';
import { eventually } from '../support/eventually';

/**
 * One leader per consumer (issue 9): two worker processes share the consumers through
 * leases, and when the leader is SIGKILLed the other takes its consumers over within a few
 * seconds. Two processes cannot share the in-process PGlite, so this runs on a server.
 */
(onPostgresServer ? describe : describe.skip)('consumer leases across worker processes', () => {
  const LEASE_TTL_MS = 2000;
  let t: Awaited<ReturnType<typeof startTestApp>>;
  const workers: ChildProcess[] = [];
  let dataDir: string;

  beforeAll(async () => {
    // The API instance runs no consumers: every projection here is the workers' work.
    t = await startTestApp({ env: { WORKERS: 'false' } });
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-workers-'));
  });
  afterAll(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await t.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const startWorker = async (): Promise<ChildProcess> => {
    const worker = await spawnWorker(t.database, dataDir, { CONSUMER_LEASE_TTL_MS: String(LEASE_TTL_MS) });
    workers.push(worker);
    return worker;
  };
  const leaseOwners = async () => {
    const { rows } = await t.db.query<{ name: string; owner: string }>(
      'SELECT name, owner FROM consumer_leases WHERE expires_at > clock_timestamp() ORDER BY name',
    );
    return rows.map((r) => ({ name: r.name, pid: Number(r.owner.split(':')[1]) }));
  };
  const accountVisible = async (slug: string) => (await t.admin('GET', `/admin/accounts/${slug}`)).status === 200;

  it('moves every consumer of a SIGKILLed leader to the other worker within seconds, losing nothing', async () => {
    const first = await startWorker();
    await eventually(async () => (await leaseOwners()).length >= 9, 30000, 'the first worker to lead every consumer');
    const second = await startWorker();
    await new Promise((r) => setTimeout(r, 1500));
    // Each consumer has exactly one leader, and it is the first worker.
    const owners = await leaseOwners();
    expect(owners.map((o) => o.name)).toEqual(expect.arrayContaining(['accounts:v1', 'subscriber:fulfilment']));
    expect(new Set(owners.map((o) => o.pid))).toEqual(new Set([first.pid]));

    expect((await t.admin('POST', '/admin/accounts', { name: 'Before Crash', email: 'before@example.com' })).status).toBe(201);
    await eventually(() => accountVisible('before-crash'), 10000, 'the first worker to project');

    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    const killedAt = Date.now();
    expect((await t.admin('POST', '/admin/accounts', { name: 'After Crash', email: 'after@example.com' })).status).toBe(201);
    await eventually(() => accountVisible('after-crash'), 20000, 'the second worker to take over');
    const tookOverMs = Date.now() - killedAt;
    // The lease's TTL plus a supervisor round; the slack is for a loaded two-core machine.
    expect(tookOverMs).toBeLessThan(LEASE_TTL_MS + 8000);

    await eventually(async () => (await leaseOwners()).every((o) => o.pid === second.pid) && (await leaseOwners()).length >= 9, 10000, 'every lease on the second worker');
    const caughtUp = async () => {
      const body = (await t.admin('GET', '/admin/projections')).body;
      return [...body.items, ...body.subscribers].every((item: any) => !item.behind) && body;
    };
    const status = await eventually(caughtUp, 10000, 'every consumer to catch up');
    for (const item of [...status.items, ...status.subscribers]) {
      expect(item).toMatchObject({ behind: false, lag_seconds: 0, parked: 0, stalled_since: null });
      expect(Number(item.leader.split(':')[1])).toBe(second.pid);
    }
  });
});
