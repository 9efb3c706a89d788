import { CommandBus } from '@nestjs/cqrs';
import { DraftListingCommand } from '../../src/catalog/commands/draft-listing';
import { startTestApp, TestApp } from '../support/app';
import { createJob, grantCredits, jobAction, waitForStage } from './factory-client';

/** publish makes one listing per job, also when two publishes race or one is retried after a crash. */
describe('publishing a generation job', () => {
  let t: TestApp;
  let creator: { accountId: string; key: string; keyId: string };

  beforeAll(async () => {
    t = await startTestApp();
    creator = await t.accountWithKey({ scopes: ['factory:run'] });
    await grantCredits(t, creator.accountId, 5);
  });
  afterAll(() => t.close());

  async function inReview() {
    const id = (await createJob(t, creator.key, 'a 6-DoF arm with a gripper')).body.id;
    await waitForStage(t, creator.key, id, 'awaiting_approval');
    await jobAction(t, creator.key, id, 'approve');
    return waitForStage(t, creator.key, id, 'review');
  }

  const listingsOf = async () =>
    (await t.db.query<{ stream_id: string }>(`SELECT stream_id FROM events WHERE type = 'ListingDrafted' AND data->>'account_id' = $1`, [creator.accountId])).rows;

  test('two publishes racing: one listing, one published job; the loser is told why', async () => {
    const job = await inReview();
    const before = (await listingsOf()).length;
    const [a, b] = await Promise.all([jobAction(t, creator.key, job.id, 'publish', { price_cents: 900 }), jobAction(t, creator.key, job.id, 'publish', { price_cents: 900 })]);
    const statuses = [a.status, b.status].sort();
    expect(statuses[0]).toBe(200);
    expect([400, 409]).toContain(statuses[1]);
    expect((await listingsOf()).length).toBe(before + 1);
  });

  test('a publish retried after a crash between the listing and the job move finishes with the same listing', async () => {
    const job = await inReview();
    const before = (await listingsOf()).length;
    // The first attempt died right after the catalog published the listing.
    const auth = { accountId: creator.accountId, keyId: creator.keyId, mode: 'test' as const, tier: 'free' as const, scopes: ['factory:run'], active: true };
    const listingId = `lst_${job.id.slice(4)}`;
    const details = { title: job.draft.title, description: '', type: job.draft.type, category: '', license: 'MIT', version: '0.1.0', price: { amount: 900, currency: 'usd' }, tags: [], frameworks: [], hardware: [], sensors: [], ros_compatible: false, jetson_compatible: false, isaac_sim_compatible: false, file: { name: job.artifact.file_name, size: job.artifact.size, extension: '.zip', storage_path: job.artifact.storage_path } };
    await t.app.get(CommandBus).execute(new DraftListingCommand(auth, 'model', details, true, listingId));
    expect((await t.request('GET', `/v1/factory/jobs/${job.id}`, { key: creator.key })).body.stage).toBe('review');

    const retried = await jobAction(t, creator.key, job.id, 'publish', { price_cents: 900 });
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ stage: 'published', listing: { id: listingId, status: 'published' } });
    expect((await listingsOf()).length).toBe(before + 1);
  });
});
