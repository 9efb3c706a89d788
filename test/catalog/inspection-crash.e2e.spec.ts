import type { ChildProcess } from 'node:child_process';
import { InspectionWorker } from '../../src/catalog/inspection-worker';
import { spawnWorker, startTestApp } from '../support/app';
import { onnxModel } from '../support/asset-files';
import { onPostgresServer } from '../support/database';
import { eventually } from '../support/eventually';
import { eventsOf, modelBody, upload } from './catalog-client';

/**
 * Issue 40: background inspection survives kill -9. The outcome of a request is appended by
 * the inspection worker, and its checkpoint passes the request only after that: a worker
 * process SIGKILLed mid-burst leaves requests pending, and the next process inspects them
 * (again, for those whose outcome was stored but whose checkpoint had not moved), recording
 * one outcome per listing.
 */
describe('background inspection survives a crash', () => {
  let t: Awaited<ReturnType<typeof startTestApp>>;
  let seller: { accountId: string; key: string };

  beforeAll(async () => {
    // The local store in every pass: the worker process reads the files from the same DATA_DIR.
    t = await startTestApp({ localStore: true, env: { INSPECTION_INLINE_MAX_BYTES: '1024' } });
    seller = await t.accountWithKey({ name: 'Crash Lab' });
  });
  afterAll(() => t.close());

  const statusOf = async (id: string) => (await t.request('GET', `/v1/listings/${id}`, { key: seller.key })).body.validation_status as string;
  const passed = async (ids: string[]) => (await Promise.all(ids.map(statusOf))).filter((s) => s === 'passed').length;

  // A second process cannot open the in-process PGlite, so this one runs on the Postgres server.
  (onPostgresServer ? it : it.skip)('resumes pending inspections after the worker process is SIGKILLed mid-burst, one outcome each', async () => {
    await t.app.get(InspectionWorker).stop();
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      // About 5.6 MB each: onnxruntime loads every one, so each inspection takes a while.
      const grant = await upload(t, seller.key, 'policy.onnx', onnxModel({ producer: `crash ${i}`, hidden: 200_000 }));
      const res = await t.request('POST', '/v1/models', { key: seller.key, body: modelBody(grant, { title: `Crash ${i}` }) });
      expect([res.status, res.body.validation_status]).toEqual([201, 'pending']);
      ids.push(res.body.id);
    }
    let worker: ChildProcess | undefined;
    try {
      worker = await spawnWorker(t.database, t.dataDir);
      await eventually(async () => (await passed(ids)) >= 1, 120_000, 'the worker to pass a first inspection');
      worker.kill('SIGKILL');
      await new Promise((resolve) => worker!.once('exit', resolve));
      const atKill = await passed(ids);
      // The kill landed inside the burst, not after it.
      expect(atKill).toBeLessThan(ids.length);

      worker = await spawnWorker(t.database, t.dataDir);
      await eventually(async () => (await passed(ids)) === ids.length, 180_000, 'every inspection after the restart');
      const published = (await eventsOf(t, 'ListingPublished', seller.accountId)).filter((e) => ids.includes(e.data.listing_id));
      expect(published.map((e) => e.data.listing_id).sort()).toEqual([...ids].sort());
      expect((await eventsOf(t, 'ListingValidationFailed', seller.accountId)).filter((e) => ids.includes(e.data.listing_id))).toEqual([]);
      for (const e of published) expect(e.data.files[0].inspection).toMatchObject({ format: 'onnx', onnxruntime: 'loads' });
    } finally {
      worker?.kill('SIGKILL');
      await t.app.get(InspectionWorker).start();
    }
  }, 400_000);
});
