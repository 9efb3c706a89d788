import { startTestApp, TestApp } from '../support/app';
import { createJob, creditsLeft, getJob, grantCredits, jobAction, waitForStage } from './factory-client';

/** Issue 12's list: each gets a clear error in the envelope and changes nothing. */
describe('generation jobs: bad input', () => {
  let t: TestApp;
  let creator: { accountId: string; key: string };

  const jobEventCount = async () => Number((await t.db.query<{ n: string }>(`SELECT count(*) AS n FROM events WHERE stream_id LIKE 'job-%'`)).rows[0].n);

  /** Moves only the worker makes: other jobs of this file may take them while a request is refused. */
  const WORKER_MOVES = ['GenerationJobAnalysisStarted', 'GenerationJobQuestionsAsked', 'GenerationJobPlanningStarted', 'GenerationJobPlanned', 'GenerationJobCompleted', 'GenerationJobFailed'];
  const requestEvents = async () => (await t.db.query<{ n: string }>('SELECT count(*) AS n FROM events WHERE NOT (type = ANY($1::text[]))', [WORKER_MOVES])).rows[0].n;

  /** Runs a request that must fail and checks that it appended nothing. */
  async function rejected(request: () => Promise<{ status: number; body: any }>, status: number, code: string, message?: RegExp) {
    const before = await requestEvents();
    const res = await request();
    expect(res.status).toBe(status);
    expect(res.body.error).toMatchObject({ code, message: expect.any(String), request_id: expect.any(String) });
    if (message) expect(res.body.error.message).toMatch(message);
    expect(await requestEvents()).toBe(before);
    return res.body.error;
  }

  beforeAll(async () => {
    t = await startTestApp();
    creator = await t.accountWithKey({ scopes: ['factory:run'] });
    await grantCredits(t, creator.accountId, 3);
  });
  afterAll(() => t.close());

  test.each([
    ['missing', undefined, /prompt/],
    ['empty', '', /prompt/],
    ['blank', '   ', /blank/],
    ['over 4,000 characters', 'a'.repeat(4001), /prompt/],
    ['not a string', 42, /prompt/],
  ])('a prompt %s is 400 validation_failed and spends nothing', async (_what, prompt, message) => {
    await rejected(() => (prompt === undefined ? t.request('POST', '/v1/factory/jobs', { key: creator.key, body: {} }) : createJob(t, creator.key, prompt)), 400, 'validation_failed', message);
    expect(await creditsLeft(t, creator.accountId)).toBe(3);
  });

  test('a prompt of exactly 4,000 characters is accepted', async () => {
    const res = await createJob(t, creator.key, `a robot arm ${'x'.repeat(3988)}`);
    expect(res.status).toBe(201);
    expect(await creditsLeft(t, creator.accountId)).toBe(2);
  });

  test('a key without factory:run is 403 scope_required naming the scope', async () => {
    const other = await t.accountWithKey({ scopes: ['listings:read'] });
    await grantCredits(t, other.accountId, 1);
    await rejected(() => createJob(t, other.key, 'a 6-DoF arm'), 403, 'scope_required', /factory:run/);
  });

  test('no credit left is 402 insufficient_credits', async () => {
    const broke = await t.accountWithKey({ scopes: ['factory:run'] });
    await rejected(() => createJob(t, broke.key, 'a 6-DoF arm'), 402, 'insufficient_credits');
  });

  test('an id that names no job, whatever its shape, is 404 not_found; so is a foreign one (ids are opaque)', async () => {
    await rejected(() => getJob(t, creator.key, 'not-a-job'), 404, 'not_found');
    await rejected(() => getJob(t, creator.key, 'job_nonexistent1'), 404, 'not_found');
    await rejected(() => jobAction(t, creator.key, 'job_x;drop', 'approve'), 404, 'not_found');
    await rejected(() => getJob(t, creator.key, 'job_AAAAAAAAAAAAAAAAAAAAAAAA'), 404, 'not_found');
    const mine = (await createJob(t, creator.key, 'a 6-DoF arm')).body.id;
    const other = await t.accountWithKey({ scopes: ['factory:run'] });
    await rejected(() => getJob(t, other.key, mine), 404, 'not_found');
    await rejected(() => jobAction(t, other.key, mine, 'approve'), 404, 'not_found');
  });

  describe('moves', () => {
    let asking: string;
    let planned: string;

    beforeAll(async () => {
      await grantCredits(t, creator.accountId, 2);
      asking = (await createJob(t, creator.key, 'a robot arm for welding')).body.id;
      planned = (await createJob(t, creator.key, 'a 6-DoF arm with a gripper')).body.id;
      await waitForStage(t, creator.key, asking, 'awaiting_clarification');
      await waitForStage(t, creator.key, planned, 'awaiting_approval');
    });

    test('clarify: unknown question id, missing answer, blank answer, no answers', async () => {
      await rejected(() => jobAction(t, creator.key, asking, 'clarify', { answers: [{ id: 'colour', answer: 'red' }] }), 400, 'validation_failed', /colour/);
      await rejected(() => jobAction(t, creator.key, asking, 'clarify', { answers: [{ id: 'dof' }] }), 400, 'validation_failed', /answer/);
      await rejected(() => jobAction(t, creator.key, asking, 'clarify', { answers: [{ id: 'dof', answer: '  ' }] }), 400, 'validation_failed', /blank/);
      await rejected(() => jobAction(t, creator.key, asking, 'clarify', { answers: [] }), 400, 'validation_failed', /answers/);
      await rejected(() => jobAction(t, creator.key, asking, 'clarify', {}), 400, 'validation_failed', /answers/);
    });

    test('clarify outside awaiting_clarification is 400 invalid_request naming the stage', async () => {
      await rejected(() => jobAction(t, creator.key, planned, 'clarify', { answers: [{ id: 'dof', answer: '6' }] }), 400, 'invalid_request', /"awaiting_approval"/);
    });

    test('approve twice: the second is 400 invalid_request naming the stage', async () => {
      expect((await jobAction(t, creator.key, planned, 'approve')).status).toBe(200);
      await rejected(() => jobAction(t, creator.key, planned, 'approve'), 400, 'invalid_request', /stage "(generating|review)"/);
    });

    test('regenerate with stage missing or other than plan/build', async () => {
      await rejected(() => jobAction(t, creator.key, asking, 'regenerate'), 400, 'validation_failed', /stage/);
      await rejected(() => t.request('POST', `/v1/factory/jobs/${asking}/regenerate?stage=analysis`, { key: creator.key }), 400, 'validation_failed', /stage/);
      await rejected(() => t.request('POST', `/v1/factory/jobs/${asking}/regenerate?stage=build`, { key: creator.key }), 400, 'invalid_request', /"awaiting_clarification"/);
    });

    test('publish: before review, 1-99 cents, negative, not an integer', async () => {
      await rejected(() => jobAction(t, creator.key, asking, 'publish', { price_cents: 500 }), 400, 'invalid_request', /"awaiting_clarification"/);
      await waitForStage(t, creator.key, planned, 'review');
      await rejected(() => jobAction(t, creator.key, planned, 'publish', { price_cents: 50 }), 400, 'price_too_low');
      await rejected(() => jobAction(t, creator.key, planned, 'publish', { price_cents: 1 }), 400, 'price_too_low');
      await rejected(() => jobAction(t, creator.key, planned, 'publish', { price_cents: -100 }), 400, 'validation_failed', /price_cents/);
      await rejected(() => jobAction(t, creator.key, planned, 'publish', { price_cents: 150.5 }), 400, 'validation_failed', /price_cents/);
      await rejected(() => jobAction(t, creator.key, planned, 'publish', { price_cents: '500' }), 400, 'validation_failed', /price_cents/);
      await rejected(() => jobAction(t, creator.key, planned, 'publish', {}), 400, 'validation_failed', /price_cents/);
      expect((await getJob(t, creator.key, planned)).body).toMatchObject({ stage: 'review', listing: null });
      // And a free listing is fine.
      expect((await jobAction(t, creator.key, planned, 'publish', { price_cents: 0 })).body.stage).toBe('published');
    });
  });

  test('nothing above created a job beyond the accepted ones', async () => {
    expect(await jobEventCount()).toBeGreaterThan(0);
    const { rows } = await t.db.query<{ n: string }>(`SELECT count(DISTINCT stream_id) AS n FROM events WHERE stream_id LIKE 'job-%'`);
    expect(Number(rows[0].n)).toBe(4);
  });
});
