import { startTestApp, TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { startReceiver } from '../webhooks/receiver';
import { createJob, creditsLeft, grantCredits, jobAction, waitForStage } from './factory-client';

/**
 * Live mode plans with an OpenAI-compatible server; here a local stand-in. Its plan for a
 * robot whose links form two trees passes the schema but not the URDF checks, so the build
 * fails: the job keeps its stage with `error` and the build's credit comes back.
 */
describe('live mode: model server plans, code builds and validates', () => {
  let t: TestApp;
  let upstream: Awaited<ReturnType<typeof startReceiver>>;
  let answer: 'broken-robot' | 'good-robot' | 'down' | 'not-json' = 'broken-robot';
  const link = (name: string) => ({ name, geometry: { shape: 'box', size: [0.1, 0.1, 0.1] }, center: [0, 0, 0], mass_kg: 1 });
  const robot = (joined: boolean) => ({
    kind: 'robot_description',
    title: 'Live robot',
    robot_type: 'arm',
    dimensions: { dof: 1 },
    links: [link('a'), link('b')],
    joints: joined ? [{ name: 'j', type: 'revolute', parent: 'a', child: 'b', origin_xyz: [0, 0, 0.1], axis: [0, 0, 1], limit: { lower: -1, upper: 1, effort: 5, velocity: 1 } }] : [],
    assumptions: ['payload not understood: assumed 1 kg'],
  });

  beforeAll(async () => {
    upstream = await startReceiver((r) => {
      if (answer === 'down') return 500;
      const analysis = r.body.includes('You analyse');
      const content = answer === 'not-json' ? 'sure! here is a robot' : JSON.stringify(analysis ? { kind: 'robot_description', questions: [] } : robot(answer === 'good-robot'));
      return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ choices: [{ message: { role: 'assistant', content } }] }) };
    });
    t = await startTestApp({ env: { INFERENCE_UPSTREAM_URL: `http://127.0.0.1:${upstream.port}/v1`, INFERENCE_UPSTREAM_TIMEOUT_MS: '2000' } });
  });
  afterAll(async () => {
    await t.close();
    await upstream.close();
  });

  test('a build that fails validation sets error, keeps generating, and refunds its credit; regenerate?stage=build pays again', async () => {
    const creator = await t.accountWithKey({ mode: 'live', scopes: ['factory:run'] });
    await grantCredits(t, creator.accountId, 2, 'live');
    const id = (await createJob(t, creator.key, 'a robot')).body.id;
    const planned = await waitForStage(t, creator.key, id, 'awaiting_approval');
    expect(planned.plan.title).toBe('Live robot');
    expect(await creditsLeft(t, creator.accountId, 'live')).toBe(1);
    await jobAction(t, creator.key, id, 'approve');
    const failed = await waitForStage(t, creator.key, id, 'generating', { orError: true });
    expect(failed).toMatchObject({ stage: 'generating', artifact: null, credits_spent: 0, error: { code: 'artifact_invalid', stage: 'generating', message: expect.stringMatching(/2 trees/) } });
    // The refund follows the failure on the credits stream.
    await eventually(async () => (await creditsLeft(t, creator.accountId, 'live')) === 2, 10000, 'the refund');

    answer = 'good-robot';
    const retry = await t.request('POST', `/v1/factory/jobs/${id}/regenerate?stage=plan`, { key: creator.key });
    expect(retry.status).toBe(400); // a failed build is retried with build, not plan
    const rebuild = await t.request('POST', `/v1/factory/jobs/${id}/regenerate?stage=build`, { key: creator.key });
    expect(rebuild.status).toBe(200);
    // The worker may already be on it (and fail it again): only the stage is certain here.
    expect(rebuild.body.stage).toBe('generating');
    // The plan is unchanged (still two trees): the rebuild fails again and is refunded again.
    await waitForStage(t, creator.key, id, 'generating', { orError: true });
    await eventually(async () => (await creditsLeft(t, creator.accountId, 'live')) === 2, 10000, 'the second refund');
    const refunds = await t.db.query(`SELECT data FROM events WHERE type = 'CreditsRefunded' AND data->>'job_id' = $1`, [id]);
    expect(refunds.rows.map((r: any) => r.data.build)).toEqual([1, 2]);
  });

  test('an upstream failure or an answer that is not JSON sets error and leaves the job in its stage', async () => {
    const creator = await t.accountWithKey({ mode: 'live', scopes: ['factory:run'] });
    await grantCredits(t, creator.accountId, 1, 'live');
    answer = 'down';
    const id = (await createJob(t, creator.key, 'a robot')).body.id;
    const failed = await waitForStage(t, creator.key, id, 'analyzing', { orError: true });
    expect(failed).toMatchObject({ stage: 'analyzing', error: { code: 'engine_failed', stage: 'analyzing' } });
    // Not a build: the creation credit stays spent until a build fails.
    expect(await creditsLeft(t, creator.accountId, 'live')).toBe(0);

    answer = 'not-json';
    expect((await t.request('POST', `/v1/factory/jobs/${id}/regenerate?stage=plan`, { key: creator.key })).status).toBe(200);
    const again = await waitForStage(t, creator.key, id, 'planning', { orError: true });
    expect(again.error).toMatchObject({ code: 'engine_failed', message: expect.stringMatching(/JSON/) });

    answer = 'good-robot';
    expect((await t.request('POST', `/v1/factory/jobs/${id}/regenerate?stage=plan`, { key: creator.key })).status).toBe(200);
    await waitForStage(t, creator.key, id, 'awaiting_approval');
    await jobAction(t, creator.key, id, 'approve');
    const review = await waitForStage(t, creator.key, id, 'review');
    expect(review.artifact.file_name).toBe('live-robot.zip');
  });
});
