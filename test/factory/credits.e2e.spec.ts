import { startTestApp, TestApp } from '../support/app';
import { serveForCli, svc } from '../support/cli';
import { eventually } from '../support/eventually';
import { Credits } from '../../src/factory/credits';
import { JobStreams } from '../../src/factory/job-streams';
import { JobWorker } from '../../src/factory/job-worker';
import { createJob, creditsLeft, getJob, grantCredits, jobAction, waitForStage } from './factory-client';

/** Per account and mode; a spend is atomic with the move that spends it; a failed build gives its credit back. */
describe('generation credits', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  test('with one credit left, ten concurrent creates give one job and nine 402 insufficient_credits', async () => {
    const creator = await t.accountWithKey({ scopes: ['factory:run'] });
    await grantCredits(t, creator.accountId, 1);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => createJob(t, creator.key, `a 6-DoF arm number ${i}`)));
    expect(results.map((r) => r.status).sort()).toEqual([201, 402, 402, 402, 402, 402, 402, 402, 402, 402]);
    for (const r of results.filter((r) => r.status === 402)) expect(r.body.error.code).toBe('insufficient_credits');
    expect(await creditsLeft(t, creator.accountId)).toBe(0);
    expect((await t.request('GET', '/v1/factory/jobs', { key: creator.key })).body.items).toHaveLength(1);
    const { rows } = await t.db.query(`SELECT data FROM events WHERE type = 'CreditsSpent' AND data->>'account_id' = $1`, [creator.accountId]);
    expect(rows).toHaveLength(1);
  });

  test('with three credits, twenty concurrent creates give exactly three jobs', async () => {
    const creator = await t.accountWithKey({ scopes: ['factory:run'] });
    await grantCredits(t, creator.accountId, 3);
    const results = await Promise.all(Array.from({ length: 20 }, () => createJob(t, creator.key, 'a differential-drive base')));
    expect(results.filter((r) => r.status === 201)).toHaveLength(3);
    expect(results.filter((r) => r.status === 402)).toHaveLength(17);
    expect(await creditsLeft(t, creator.accountId)).toBe(0);
  });

  test('test-mode credits are not spendable in live mode', async () => {
    const creator = await t.accountWithKey({ scopes: ['factory:run'] });
    await grantCredits(t, creator.accountId, 5, 'test');
    const live = await t.admin('POST', '/admin/keys', { account: creator.accountId, mode: 'live', tier: 'free', scopes: ['factory:run'] });
    const res = await createJob(t, live.body.key, 'a 6-DoF arm');
    expect(res.status).toBe(402);
    expect(res.body.error.code).toBe('insufficient_credits');
    expect(await creditsLeft(t, creator.accountId, 'test')).toBe(5);
  });

  test('regenerate?stage=build spends one credit and builds again; regenerate?stage=plan and approving again spend none', async () => {
    const creator = await t.accountWithKey({ scopes: ['factory:run'] });
    await grantCredits(t, creator.accountId, 2);
    const id = (await createJob(t, creator.key, 'a 6-DoF arm with a gripper')).body.id;
    await waitForStage(t, creator.key, id, 'awaiting_approval');
    await jobAction(t, creator.key, id, 'approve');
    const first = await waitForStage(t, creator.key, id, 'review');
    expect(first.credits_spent).toBe(1);

    const rebuild = await t.request('POST', `/v1/factory/jobs/${id}/regenerate?stage=build`, { key: creator.key });
    expect(rebuild.status).toBe(200);
    // The job as the request left it: building again, or already done when the worker was quick.
    expect(rebuild.body.credits_spent).toBe(2);
    expect(['generating', 'review']).toContain(rebuild.body.stage);
    const second = await waitForStage(t, creator.key, id, 'review');
    expect(second.artifact.storage_path).toContain('/build-2/');
    // Same plan, same bytes.
    expect(second.artifact.sha256).toBe(first.artifact.sha256);
    expect(await creditsLeft(t, creator.accountId)).toBe(0);

    const replan = await t.request('POST', `/v1/factory/jobs/${id}/regenerate?stage=plan`, { key: creator.key });
    expect(replan.body.stage).toBe('planning');
    await waitForStage(t, creator.key, id, 'awaiting_approval');
    expect((await jobAction(t, creator.key, id, 'approve')).status).toBe(200);
    expect((await waitForStage(t, creator.key, id, 'review')).credits_spent).toBe(2);

    const broke = await t.request('POST', `/v1/factory/jobs/${id}/regenerate?stage=build`, { key: creator.key });
    expect(broke.status).toBe(402);
    expect((await getJob(t, creator.key, id)).body.stage).toBe('review');
  });
});

describe('a paid rebuild whose job moved on before it started', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  test('is refunded once (by the worker, the request having died), and a later rebuild pays once under a new build number', async () => {
    const creator = await t.accountWithKey({ scopes: ['factory:run'] });
    await grantCredits(t, creator.accountId, 3);
    const id = (await createJob(t, creator.key, 'a 6-DoF arm')).body.id;
    await waitForStage(t, creator.key, id, 'awaiting_approval');
    await jobAction(t, creator.key, id, 'approve');
    await waitForStage(t, creator.key, id, 'review');

    const worker = t.app.get(JobWorker);
    await worker.stop();
    // The request spent the credit for build 2 from this revision, then died.
    const job = (await t.app.get(JobStreams).load('test', id))!;
    const spend = await t.app.get(Credits).spend('test', creator.accountId, { job_id: id, build: job.state.build + 1, job_revision: job.revision });
    expect(spend.build).toBe(2);
    expect(await creditsLeft(t, creator.accountId)).toBe(1);
    // Meanwhile the creator replans: the job is no longer where the credit was spent.
    expect((await t.request('POST', `/v1/factory/jobs/${id}/regenerate?stage=plan`, { key: creator.key })).status).toBe(200);
    await worker.start();
    await eventually(async () => (await creditsLeft(t, creator.accountId)) === 2, 10000, 'the refund');

    await waitForStage(t, creator.key, id, 'awaiting_approval');
    await jobAction(t, creator.key, id, 'approve');
    await waitForStage(t, creator.key, id, 'review');
    const rebuild = await t.request('POST', `/v1/factory/jobs/${id}/regenerate?stage=build`, { key: creator.key });
    expect(rebuild.status).toBe(200);
    const rebuilt = await waitForStage(t, creator.key, id, 'review');
    expect(rebuilt.artifact.storage_path).toContain('/build-3/');
    expect(await creditsLeft(t, creator.accountId)).toBe(1);
    const { rows } = await t.db.query(`SELECT type, data FROM events WHERE type IN ('CreditsSpent', 'CreditsRefunded') AND data->>'job_id' = $1 ORDER BY global_position`, [id]);
    expect(rows.map((r: any) => `${r.type}:${r.data.build}`)).toEqual(['CreditsSpent:1', 'CreditsSpent:2', 'CreditsRefunded:2', 'CreditsSpent:3']);
    expect(rebuilt.credits_spent).toBe(2);
  });
});

describe('what is left: GET /v1/me and svc factory jobs', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  test('GET /v1/me shows the credits left in the key\'s mode; the operator CLI lists jobs and credits', async () => {
    const creator = await t.accountWithKey({ scopes: ['factory:run'] });
    await grantCredits(t, creator.accountId, 2);
    const job = (await createJob(t, creator.key, 'a 6-DoF arm')).body;
    expect((await t.request('GET', '/v1/me', { key: creator.key })).body.credits).toBe(1);

    const restore = await serveForCli(t);
    try {
      const json = await svc('factory', 'jobs', '--account', creator.accountId, '--json');
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toMatchObject({ account: creator.accountId, mode: 'test', credits: 1, items: [{ id: job.id, object: 'factory_job' }] });
      const text = await svc('factory', 'jobs', '--account', creator.accountId, '--mode', 'live');
      expect(text.stdout).toContain('(live): 0 credits left');
      expect(text.stdout).toContain('(no jobs)');
    } finally {
      restore();
    }
  });
});
