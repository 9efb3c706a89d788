import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { JobWorker } from '../../src/factory/job-worker';
import { BLOB_STORE, BlobStore } from '../../src/storage/blob-store';
import { blobsOfMode } from '../../src/storage/mode-staging';
import { ADMIN_TOKEN, startTestApp } from '../support/app';
import { onPostgresServer } from '../support/database';
import { eventually } from '../support/eventually';
import { createJob, creditsLeft, grantCredits, jobAction } from './factory-client';

/**
 * Issue 12: "a kill -9 during generating and a restart leaves one artifact and the right
 * credits". A real worker process (dist/src/main.js, WORKERS=true) is SIGKILLed while it
 * builds a burst of approved jobs, then started again. A second process cannot open the
 * in-process PGlite, so this runs on the Postgres server only (as fulfilment-crash does).
 */
(onPostgresServer ? describe : describe.skip)('the generation worker process killed mid-build', () => {
  let t: Awaited<ReturnType<typeof startTestApp>>;
  let worker: ChildProcess | undefined;
  const JOBS = 12;

  beforeAll(async () => {
    t = await startTestApp();
    // The worker of this process steps aside so the child's is the only one.
    await t.app.get(JobWorker).stop();
  });
  afterAll(async () => {
    worker?.kill('SIGKILL');
    await t.close();
  });

  const startWorker = (): ChildProcess =>
    spawn(process.execPath, [path.resolve('dist/src/main.js')], {
      // The same DATA_DIR: the child stores artifacts where this process (and the test) reads them.
      env: { ...process.env, DATABASE_URL: t.database.url!, DATA_DIR: t.dataDir, ADMIN_TOKEN, PORT: '0', WORKERS: 'true' },
      stdio: 'ignore',
    });
  const kill = async () => {
    worker!.kill('SIGKILL');
    await new Promise((resolve) => worker!.once('exit', resolve));
  };
  const count = async (type: string, ids: string[]) =>
    Number((await t.db.query<{ n: string }>(`SELECT count(*) AS n FROM events WHERE type = $1 AND data->>'job_id' = ANY($2::text[])`, [type, ids])).rows[0].n);

  test('every job reaches review once, with one stored artifact, and exactly one credit each', async () => {
    const creator = await t.accountWithKey({ scopes: ['factory:run'] });
    await grantCredits(t, creator.accountId, JOBS + 3);
    const prompts = ['a 6-DoF arm with a parallel gripper, 0.9 m reach, 5 kg payload', 'a pick-and-place policy for a two-finger gripper on a moving belt, as ONNX'];
    const ids: string[] = [];
    for (let i = 0; i < JOBS; i++) ids.push((await createJob(t, creator.key, prompts[i % 2])).body.id);

    worker = startWorker();
    await eventually(async () => (await count('GenerationJobPlanned', ids)) === JOBS, 60000, 'every plan');
    await kill();
    for (const id of ids) expect((await jobAction(t, creator.key, id, 'approve')).status).toBe(200);

    worker = startWorker();
    await eventually(async () => (await count('GenerationJobCompleted', ids)) >= 2, 60000, 'the first builds');
    await kill();
    const atKill = await count('GenerationJobCompleted', ids);

    worker = startWorker();
    await eventually(async () => (await count('GenerationJobCompleted', ids)) >= JOBS, 60000, 'every build after the restart');
    await kill();
    worker = undefined;

    expect(atKill).toBeLessThan(JOBS);
    expect(await count('GenerationJobCompleted', ids)).toBe(JOBS);
    expect(await count('GenerationJobFailed', ids)).toBe(0);
    const blobs = blobsOfMode(t.app.get<BlobStore>(BLOB_STORE), 'test');
    for (const [i, id] of ids.entries()) {
      const stored = (await blobs.list(`user/${creator.accountId}/factory/${id}/`)).map((o) => o.path.split('/').slice(-2).join('/'));
      // A policy has its README and manifest beside it; a package holds them inside.
      expect(stored.length).toBe(i % 2 === 0 ? 1 : 3);
      expect(stored.every((p) => p.startsWith('build-1/'))).toBe(true);
    }
    expect(await count('CreditsSpent', ids)).toBe(JOBS);
    expect(await count('CreditsRefunded', ids)).toBe(0);
    expect(await creditsLeft(t, creator.accountId)).toBe(3);
  });
});
