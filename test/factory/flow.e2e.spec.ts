import { strFromU8, unzipSync } from 'fflate';
import * as ort from 'onnxruntime-web';
import { validateRobotPackage } from '../../src/factory/assets/robot-package';
import { validateUrdf } from '../../src/factory/assets/urdf-validator';
import { buy } from '../commerce/commerce-client';
import { startTestApp, TestApp } from '../support/app';
import { createJob, creditsLeft, fetchBytes, getJob, grantCredits, jobAction, waitForStage } from './factory-client';

/**
 * The "done when": a test-mode job of each kind goes prompt → clarify → approve →
 * review → publish, and a buyer purchases and downloads a file that loads and runs (ONNX)
 * or passes the URDF checks, all through HTTP.
 */
describe('generation jobs end to end (test mode)', () => {
  let t: TestApp;
  let creator: { accountId: string; key: string };
  let buyer: { accountId: string; key: string };

  beforeAll(async () => {
    t = await startTestApp();
    creator = await t.accountWithKey({ scopes: ['factory:run', 'listings:read'] });
    buyer = await t.accountWithKey();
    await grantCredits(t, creator.accountId, 5);
  });
  afterAll(() => t.close());

  async function throughReview(prompt: string, answers: Record<string, string>) {
    const created = await createJob(t, creator.key, prompt);
    expect(created.status).toBe(201);
    // Queued, or already moved on by the worker: it reads the job's stream as soon as the credit is spent.
    expect(created.body).toMatchObject({ object: 'factory_job', stage: expect.stringMatching(/^(queued|analyzing|awaiting_clarification)$/), prompt, credits_spent: 1, error: null, plan: null });
    const id = created.body.id;
    const asking = await waitForStage(t, creator.key, id, 'awaiting_clarification');
    expect(asking.questions.map((q: { id: string }) => q.id).sort()).toEqual(Object.keys(answers).sort());
    const clarified = await jobAction(t, creator.key, id, 'clarify', { answers: Object.entries(answers).map(([qid, answer]) => ({ id: qid, answer })) });
    expect(clarified.status).toBe(200);
    expect(clarified.body.stage).toBe('planning');
    const planned = await waitForStage(t, creator.key, id, 'awaiting_approval');
    expect(planned.plan).toBeTruthy();
    const approved = await jobAction(t, creator.key, id, 'approve');
    expect(approved.status).toBe(200);
    expect(approved.body.stage).toBe('generating');
    const review = await waitForStage(t, creator.key, id, 'review');
    expect(review.artifact).toMatchObject({ storage_path: expect.stringMatching(new RegExp(`^user/${creator.accountId}/factory/${id}/build-1/`)), size: expect.any(Number), sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(review.draft).toMatchObject({ title: expect.any(String), type: expect.any(String), license: 'MIT', description: expect.any(String), category: expect.any(String), tags: expect.any(Array) });
    return review;
  }

  async function publishAndBuy(id: string) {
    const published = await jobAction(t, creator.key, id, 'publish', { price_cents: 1500 });
    expect(published.status).toBe(200);
    expect(published.body.stage).toBe('published');
    expect(published.body.listing).toMatchObject({ status: 'published', price: { amount: 1500, currency: 'usd' } });
    const listingId = published.body.listing.id;
    expect((await t.request('POST', `/v1/models/${listingId}/download`, { key: buyer.key })).status).toBe(402);
    await buy(t, buyer.key, listingId);
    const download = await t.request('POST', `/v1/models/${listingId}/download`, { key: buyer.key });
    expect(download.status).toBe(200);
    return { bytes: await fetchBytes(t, download.body.url), download: download.body, job: published.body };
  }

  test('a policy network: the bought .onnx loads and runs in onnxruntime', async () => {
    const review = await throughReview('something that picks parts off a moving belt with a two-finger gripper', {
      kind: 'a policy network, as ONNX please',
      dof: '6',
    });
    expect(review.plan.kind).toBe('policy_network');
    expect(review.plan.observation.fields.map((f: { name: string }) => f.name)).toContain('conveyor_speed');
    expect(review.artifact.file_name).toMatch(/\.onnx$/);
    expect(review.artifact.companions.map((c: { file_name: string }) => c.file_name)).toEqual(['README.md', 'manifest.json']);

    const { bytes, download } = await publishAndBuy(review.id);
    expect(download.file_sha256).toBe(review.artifact.sha256);
    const session = await ort.InferenceSession.create(bytes);
    const obs = review.plan.observation.size;
    const out = await session.run({ observation: new ort.Tensor('float32', new Float32Array(obs).fill(0.2), [1, obs]) });
    expect(out.action.dims).toEqual([1, review.plan.action.size]);
    await session.release();
  });

  test('a robot description: the bought .zip is a ROS 2 package whose URDF passes the checks, listed as ROS-compatible', async () => {
    const review = await throughReview('a robot arm with a parallel gripper, 0.9 m reach, 5 kg payload', { dof: 'six' });
    expect(review.plan).toMatchObject({ kind: 'robot_description', robot_type: 'arm', dimensions: { dof: 6, reach_m: 0.9, payload_kg: 5 } });
    const { bytes, job } = await publishAndBuy(review.id);
    const files = unzipSync(bytes);
    const pkg = (await validateRobotPackage(bytes)).ros_package;
    expect(Object.keys(files).sort()).toEqual([`${pkg}/CMakeLists.txt`, `${pkg}/README.md`, `${pkg}/launch/display.launch.xml`, `${pkg}/manifest.json`, `${pkg}/package.xml`, expect.stringMatching(new RegExp(`^${pkg}/urdf/.+\\.urdf$`))]);
    const urdf = Object.keys(files).find((name) => name.endsWith('.urdf'))!;
    expect(validateUrdf(strFromU8(files[urdf]))).toMatchObject({ root: 'base_link', movable_joints: 8 });
    // Published through the same inspection as any upload; a ROS package (package.xml, CMakeLists.txt, launch file), so it claims ROS (issue 40 item 6).
    const listing = (await t.request('GET', `/v1/models/${job.listing.id}`, { key: buyer.key })).body;
    expect(listing).toMatchObject({ ros_compatible: true, frameworks: ['urdf'], inspection: { format: 'zip', entries: 6 } });
  });

  test('credits: each job spent one; GET lists own jobs newest first in pages', async () => {
    expect(await creditsLeft(t, creator.accountId)).toBe(3);
    const page = await t.request('GET', '/v1/factory/jobs?limit=1', { key: creator.key });
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ has_more: true, items: [{ object: 'factory_job', stage: 'published' }] });
    const next = await t.request('GET', `/v1/factory/jobs?limit=1&cursor=${page.body.next_cursor}`, { key: creator.key });
    expect(next.body.items[0].id).not.toBe(page.body.items[0].id);
    expect(next.body.has_more).toBe(false);
    const other = await t.accountWithKey({ scopes: ['factory:run'] });
    expect((await getJob(t, other.key, page.body.items[0].id)).status).toBe(404);
    expect((await t.request('GET', '/v1/factory/jobs', { key: other.key })).body.items).toEqual([]);
  });
});
