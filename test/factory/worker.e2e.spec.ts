import { EVENT_STORE, EventStore } from '../../src/event-store/event-store';
import { ArtifactStore } from '../../src/factory/artifact-store';
import { buildArtifact } from '../../src/factory/assets/artifact';
import { JobStreams } from '../../src/factory/job-streams';
import { JobWorker } from '../../src/factory/job-worker';
import { Streams } from '../../src/platform/streams';
import { BLOB_STORE, BlobStore } from '../../src/storage/blob-store';
import { blobsOfMode } from '../../src/storage/mode-staging';
import { startTestApp, TestApp } from '../support/app';
import { ENCRYPTION_KEY, createEndpoint } from '../webhooks/helpers';
import { startReceiver } from '../webhooks/receiver';
import { eventually } from '../support/eventually';
import { createJob, creditsLeft, getJob, grantCredits, jobAction, waitForStage } from './factory-client';

/**
 * The worker is a checkpointed subscriber: a job whose worker stops mid-stage finishes
 * exactly once after a restart, two workers never make the same move, and entering review
 * and publishing reach webhooks through the existing fan-out.
 */
describe('the generation worker', () => {
  let t: TestApp;
  let creator: { accountId: string; key: string };
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestApp({ env: { WEBHOOK_RETRY_SCHEDULE: '0,1,1', WEBHOOK_TIMEOUT_MS: '5000', WEBHOOK_ENCRYPTION_KEY: ENCRYPTION_KEY } });
    creator = await t.accountWithKey({ scopes: ['factory:run', 'webhooks:write'] });
    await grantCredits(t, creator.accountId, 10);
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  const jobEvents = async (id: string) => (await t.app.get<EventStore>(EVENT_STORE).readStream(Streams.job('test', id))).map((e) => e.type);

  test('factory.job.completed and factory.job.published are delivered to the creator\'s endpoint', async () => {
    const endpoint = await createEndpoint(t, creator.key, receiver.url, ['factory.job.completed', 'factory.job.published']);
    const id = (await createJob(t, creator.key, 'a 6-DoF arm with a parallel gripper, 0.9 m reach, 5 kg payload')).body.id;
    await waitForStage(t, creator.key, id, 'awaiting_approval');
    await jobAction(t, creator.key, id, 'approve');
    await waitForStage(t, creator.key, id, 'review');
    await jobAction(t, creator.key, id, 'publish', { price_cents: 2500 });
    const events = await eventually(() => receiver.events().length >= 2 && receiver.events(), 20000, 'both webhooks');
    expect(events.map((e: any) => e.type)).toEqual(['factory.job.completed', 'factory.job.published']);
    expect(events[0].data.job).toMatchObject({ id, object: 'factory_job', stage: 'review', artifact: { file_name: expect.stringMatching(/\.zip$/) } });
    expect(events[1].data.job).toMatchObject({ id, stage: 'published', listing: { status: 'published', price: { amount: 2500 } } });
    expect(endpoint.id).toBeTruthy();
  });

  test('a worker that stopped mid-build (artifact stored, review not recorded) finishes once after restart: one artifact, one credit', async () => {
    const worker = t.app.get(JobWorker);
    const id = (await createJob(t, creator.key, 'a differential-drive base with 8 cm wheels')).body.id;
    await waitForStage(t, creator.key, id, 'awaiting_approval');
    const before = await creditsLeft(t, creator.accountId);
    await worker.stop();
    expect((await jobAction(t, creator.key, id, 'approve')).body.stage).toBe('generating');
    // What the dead worker got done: the bytes are in storage; GenerationJobCompleted is not.
    const job = (await t.app.get(JobStreams).load('test', id))!;
    const stored = await t.app.get(ArtifactStore).store(job.state, buildArtifact(job.state.plan!));
    expect((await getJob(t, creator.key, id)).body.stage).toBe('generating');

    await worker.start();
    const review = await waitForStage(t, creator.key, id, 'review');
    expect(review.artifact).toEqual(stored);
    const objects = await blobsOfMode(t.app.get<BlobStore>(BLOB_STORE), 'test').list(`user/${creator.accountId}/factory/${id}/`);
    expect(objects.map((o) => o.path)).toEqual([stored.storage_path]);
    expect((await jobEvents(id)).filter((type) => type === 'GenerationJobCompleted')).toHaveLength(1);
    expect(await creditsLeft(t, creator.accountId)).toBe(before);
    expect(review.credits_spent).toBe(1);
  });

  test('two workers handed the same event make each move once', async () => {
    const worker = t.app.get(JobWorker);
    await worker.stop();
    try {
      const id = (await createJob(t, creator.key, 'a 6-DoF arm')).body.id;
      const [created] = await t.app.get<EventStore>(EVENT_STORE).readStream(Streams.job('test', id));
      await Promise.all([worker.handle(created), worker.handle(created), worker.handle(created)]);
      await jobAction(t, creator.key, id, 'approve');
      const stream = await t.app.get<EventStore>(EVENT_STORE).readStream(Streams.job('test', id));
      const approved = stream[stream.length - 1];
      await Promise.all([worker.handle(approved), worker.handle(approved)]);
      expect(await jobEvents(id)).toEqual([
        'GenerationJobCreated', 'GenerationJobAnalysisStarted', 'GenerationJobPlanningStarted', 'GenerationJobPlanned', 'GenerationJobApproved', 'GenerationJobCompleted',
      ]);
    } finally {
      await worker.start();
    }
  });

  test('a credit spent by a request that died before creating its job still becomes the job', async () => {
    const worker = t.app.get(JobWorker);
    await worker.stop();
    const { Credits } = await import('../../src/factory/credits');
    const jobId = 'job_CrashedBeforeCreate00000';
    await t.app.get(Credits).spend('test', creator.accountId, { job_id: jobId, build: 1, prompt: 'a 6-DoF arm' });
    expect((await getJob(t, creator.key, jobId)).status).toBe(404);
    await worker.start();
    const job = await waitForStage(t, creator.key, jobId, 'awaiting_approval');
    expect(job).toMatchObject({ prompt: 'a 6-DoF arm', credits_spent: 1 });
  });

  test('prompt → review in test mode is quick (the benchmark of docs/performance.md has the figure)', async () => {
    const started = Date.now();
    const id = (await createJob(t, creator.key, 'a 6-DoF arm with a parallel gripper, 0.9 m reach, 5 kg payload')).body.id;
    await waitForStage(t, creator.key, id, 'awaiting_approval');
    await jobAction(t, creator.key, id, 'approve');
    await waitForStage(t, creator.key, id, 'review');
    // Generous for a shared machine and PGlite; the benchmark records the real figure.
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
