import { CommandBus } from '@nestjs/cqrs';
import { publishModel } from '../catalog/catalog-client';
import { buy, eventsOfType, PAYS } from '../commerce/commerce-client';
import { createJob, creditsLeft, grantCredits } from '../factory/factory-client';
import { startTestApp } from '../support/app';
import { IdempotencyKeys } from '../../src/idempotency/idempotency-keys';
import { IdempotentRequests } from '../../src/idempotency/idempotent-requests';
import { OPENAPI_PATH } from '../../src/openapi/paths';
import { eventually } from '../support/eventually';
import { recordedOfType } from '../support/events';
import { ENCRYPTION_KEY } from '../webhooks/helpers';

/** Instances of one service share the key that seals kept answers, as they share endpoint secrets. */
const env = { WEBHOOK_ENCRYPTION_KEY: ENCRYPTION_KEY };

/**
 * Idempotency-Key on every POST (issue 39), through HTTP: a retry answers the first answer
 * byte for byte and changes nothing; another request under the key is 400; one arriving
 * while the first runs is 409; keys are the caller's (account and mode, or the operator).
 */
describe('Idempotency-Key', () => {
  let t: Awaited<ReturnType<typeof startTestApp>>;
  let creator: { accountId: string; key: string };

  beforeAll(async () => {
    t = await startTestApp({ env });
    creator = await t.accountWithKey({ scopes: ['datasets:upload', 'listings:write'] });
  });
  afterAll(() => t.close());

  const draft = (key: string, title: string, idempotencyKey?: string) =>
    t.request('POST', '/v1/datasets', {
      key,
      body: { title, type: 'dataset', price_cents: 0 },
      headers: idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey },
    });
  const drafted = async (title: string) => (await recordedOfType(t, 'ListingDrafted')).filter((e) => e.data.details.title === title);

  it('answers a retry with the first answer byte for byte, Idempotent-Replayed: true, and drafts once', async () => {
    const first = await draft(creator.key, 'Replayed episodes', 'replay-1');
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await draft(creator.key, 'Replayed episodes', 'replay-1');
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    // A new request id: the retry is its own request.
    expect(again.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    expect(await drafted('Replayed episodes')).toHaveLength(1);

    // Without a key nothing changes: two requests, two drafts.
    expect((await draft(creator.key, 'Unkeyed episodes')).status).toBe(201);
    expect((await draft(creator.key, 'Unkeyed episodes')).status).toBe(201);
    expect(await drafted('Unkeyed episodes')).toHaveLength(2);
  });

  it('refuses the key with another body or another path (400 idempotency_key_reused, naming what differs) and records nothing', async () => {
    const first = await draft(creator.key, 'Reused key', 'reuse-1');
    expect(first.status).toBe(201);
    const otherBody = await draft(creator.key, 'Another title', 'reuse-1');
    expect(otherBody.status).toBe(400);
    expect(otherBody.body.error).toMatchObject({ code: 'idempotency_key_reused', differs: 'body' });
    expect(otherBody.body.error.message).toBe(
      'The Idempotency-Key "reuse-1" was first used for POST /v1/datasets with another body; this request\'s body differs. Use a new key for a different request.',
    );
    const otherPath = await t.request('POST', '/v1/models', { key: creator.key, body: { title: 'Reused key' }, headers: { 'idempotency-key': 'reuse-1' } });
    expect(otherPath.status).toBe(400);
    expect(otherPath.body.error).toMatchObject({ code: 'idempotency_key_reused', differs: 'path' });
    expect(otherPath.body.error.message).toMatch(/first used for POST \/v1\/datasets; this request's path differs/);
    expect(await drafted('Another title')).toHaveLength(0);
    // The key still answers its first request.
    expect((await draft(creator.key, 'Reused key', 'reuse-1')).text).toBe(first.text);
  });

  it('refuses a key over 255 characters, or an empty one, with 400 and runs nothing', async () => {
    const long = await draft(creator.key, 'Long key', 'k'.repeat(256));
    expect(long.status).toBe(400);
    expect(long.body.error).toMatchObject({ code: 'validation_failed', message: 'Invalid header "Idempotency-Key": 1 to 255 characters, got 256.' });
    expect((await draft(creator.key, 'Long key', '')).status).toBe(400);
    expect(await drafted('Long key')).toHaveLength(0);
    expect((await draft(creator.key, 'Longest key', 'k'.repeat(255))).status).toBe(201);
  });

  it('answers 409 idempotency_key_in_use while the first request runs, then replays its answer', async () => {
    const bus = t.app.get(CommandBus);
    const execute = bus.execute.bind(bus);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const running = new Promise<void>((resolve) => (entered = resolve));
    const spy = jest.spyOn(bus, 'execute').mockImplementationOnce(async (command) => {
      entered();
      await held;
      return execute(command);
    });
    try {
      const first = draft(creator.key, 'Slow draft', 'inflight-1');
      await running;
      const concurrent = await draft(creator.key, 'Slow draft', 'inflight-1');
      expect(concurrent.status).toBe(409);
      expect(concurrent.body.error).toMatchObject({ code: 'idempotency_key_in_use' });
      release();
      const answered = await first;
      expect(answered.status).toBe(201);
      const retry = await draft(creator.key, 'Slow draft', 'inflight-1');
      expect([retry.status, retry.text, retry.headers['idempotent-replayed']]).toEqual([201, answered.text, 'true']);
      expect(await drafted('Slow draft')).toHaveLength(1);
    } finally {
      release();
      spy.mockRestore();
    }
  });

  it('keeps 4xx answers and replays them; does not keep 5xx answers, whose retry runs again', async () => {
    const invalid = await t.request('POST', '/v1/datasets', { key: creator.key, body: { title: '' }, headers: { 'idempotency-key': 'invalid-1' } });
    expect(invalid.status).toBe(400);
    const again = await t.request('POST', '/v1/datasets', { key: creator.key, body: { title: '' }, headers: { 'idempotency-key': 'invalid-1' } });
    expect([again.status, again.text, again.headers['idempotent-replayed']]).toEqual([400, invalid.text, 'true']);

    const bus = t.app.get(CommandBus);
    const spy = jest.spyOn(bus, 'execute').mockRejectedValueOnce(new Error('the disk fell over'));
    try {
      const failed = await draft(creator.key, 'After a 500', 'fails-once');
      expect(failed.status).toBe(500);
    } finally {
      spy.mockRestore();
    }
    const retried = await draft(creator.key, 'After a 500', 'fails-once');
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(await drafted('After a 500')).toHaveLength(1);
  });

  it('keeps keys per account and per mode: the same key of another account, or of the live key, is a new request', async () => {
    const other = await t.accountWithKey({ scopes: ['datasets:upload'] });
    const live = await t.admin('POST', '/admin/keys', { account: creator.accountId, mode: 'live', tier: 'free', scopes: ['datasets:upload'] });
    expect(live.status).toBe(201);
    const mine = await draft(creator.key, 'Shared key name', 'shared-1');
    const theirs = await draft(other.key, 'Shared key name', 'shared-1');
    const myLive = await draft(live.body.key, 'Shared key name', 'shared-1');
    for (const res of [mine, theirs, myLive]) {
      expect(res.status).toBe(201);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
    }
    expect(new Set([mine.body.id, theirs.body.id, myLive.body.id]).size).toBe(3);
    expect(await drafted('Shared key name')).toHaveLength(3);
    // A second key of the same account and mode shares the account's keys, as Stripe's do.
    const second = await t.admin('POST', '/admin/keys', { account: creator.accountId, mode: 'test', tier: 'free', scopes: ['datasets:upload'] });
    const bySecond = await draft(second.body.key, 'Shared key name', 'shared-1');
    expect([bySecond.text, bySecond.headers['idempotent-replayed']]).toEqual([mine.text, 'true']);
  });

  it('spends one generation credit for a factory job created twice under one key', async () => {
    const maker = await t.accountWithKey({ scopes: ['factory:run'] });
    await grantCredits(t, maker.accountId, 2);
    const headers = { 'idempotency-key': 'job-1' };
    const first = await t.request('POST', '/v1/factory/jobs', { key: maker.key, body: { prompt: 'a 6-DoF arm' }, headers });
    const again = await t.request('POST', '/v1/factory/jobs', { key: maker.key, body: { prompt: 'a 6-DoF arm' }, headers });
    expect(first.status).toBe(201);
    expect([again.status, again.text, again.headers['idempotent-replayed']]).toEqual([201, first.text, 'true']);
    expect(await creditsLeft(t, maker.accountId)).toBe(1);
    const spent = (await recordedOfType(t, 'CreditsSpent')).filter((e) => e.data.account_id === maker.accountId);
    expect(spent).toHaveLength(1);
    expect((await t.request('GET', '/v1/factory/jobs', { key: maker.key })).body.items).toHaveLength(1);
    // Without a key, a second create is a second job.
    expect((await createJob(t, maker.key, 'a 6-DoF arm')).status).toBe(201);
    expect(await creditsLeft(t, maker.accountId)).toBe(0);
  });

  it('opens one checkout session for a purchase sent twice under one key', async () => {
    const seller = await t.accountWithKey({ name: 'Seller' });
    const buyer = await t.accountWithKey({ scopes: ['models:read'] });
    const model = await publishModel(t, seller.key, { title: 'Keyed purchase', price_cents: 1500 });
    const headers = { 'idempotency-key': 'buy-1' };
    const first = await t.request('POST', '/v1/purchases', { key: buyer.key, body: { asset: model.id }, headers });
    const again = await t.request('POST', '/v1/purchases', { key: buyer.key, body: { asset: model.id }, headers });
    expect(first.status).toBe(201);
    expect([again.status, again.text, again.headers['idempotent-replayed']]).toEqual([201, first.text, 'true']);
    const opened = (await eventsOfType(t, 'CheckoutSessionOpened')).filter((e) => e.data.buyer_account_id === buyer.accountId);
    expect(opened).toHaveLength(1);
  });

  it('creates one webhook endpoint under one key, and replays its secret from the sealed answer', async () => {
    const { key } = await t.accountWithKey({ scopes: ['webhooks:write'] });
    const headers = { 'idempotency-key': 'endpoint-1' };
    const body = { url: 'http://localhost:4242/hooks', events: ['listing.purchased'] };
    const first = await t.request('POST', '/v1/webhook_endpoints', { key, body, headers });
    const again = await t.request('POST', '/v1/webhook_endpoints', { key, body, headers });
    expect(first.status).toBe(201);
    expect([again.status, again.text, again.headers['idempotent-replayed']]).toEqual([201, first.text, 'true']);
    expect((await t.request('GET', '/v1/webhook_endpoints', { key })).body.items).toHaveLength(1);
    // The secret is in the answer, never in the table in the clear.
    const { rows } = await t.db.query<{ body: string }>("SELECT body FROM idempotency_keys WHERE key = 'endpoint-1'");
    expect(rows).toHaveLength(1);
    expect(rows[0].body).not.toContain(first.body.secret);
    expect(rows[0].body).not.toContain('whsec_');
  });

  it('refunds a purchase once through the processor when the operator sends the refund twice under one key', async () => {
    const seller = await t.accountWithKey({ name: 'Refunding seller' });
    const buyer = await t.accountWithKey({ scopes: ['models:read'] });
    const model = await publishModel(t, seller.key, { title: 'Keyed refund', price_cents: 2000 });
    const session = await buy(t, buyer.key, model.id);
    const purchase = (await t.request('GET', '/v1/purchases?limit=100', { key: buyer.key })).body.items.find((p: any) => p.checkout_session_id === session.id);
    const refund = () =>
      t.request('POST', `/admin/purchases/${purchase.id}/refund`, { body: {}, headers: { authorization: 'Bearer test-admin-token', 'idempotency-key': 'refund-1' } });
    const first = await refund();
    const again = await refund();
    expect(first.status).toBe(200);
    expect(first.body.status).toBe('refunded');
    expect([again.status, again.text, again.headers['idempotent-replayed']]).toEqual([200, first.text, 'true']);
    const paymentId = (await eventsOfType(t, 'PurchaseCompleted')).find((e) => e.data.purchase_id === purchase.id)!.data.payment_reference;
    const { rows } = await t.db.query(`SELECT 1 FROM sandbox_processor_records WHERE kind = 'refund' AND payment_id = $1`, [paymentId]);
    expect(rows).toHaveLength(1);
    expect((await eventsOfType(t, 'RefundRecorded')).filter((e) => e.data.purchase_id === purchase.id)).toHaveLength(1);
  });

  it('replays after the service restarts on the same database', async () => {
    const first = await draft(creator.key, 'Across a restart', 'restart-1');
    expect(first.status).toBe(201);
    const second = await startTestApp({ shared: t.database, env });
    try {
      const again = await second.request('POST', '/v1/datasets', {
        key: creator.key,
        body: { title: 'Across a restart', type: 'dataset', price_cents: 0 },
        headers: { 'idempotency-key': 'restart-1' },
      });
      expect([again.status, again.text, again.headers['idempotent-replayed']]).toEqual([201, first.text, 'true']);
    } finally {
      await second.close();
    }
    expect(await drafted('Across a restart')).toHaveLength(1);
  });

  it('costs no statement without the header, and two with it: one to take the key, one to keep the answer; a replay one', async () => {
    const spy = jest.spyOn(t.db, 'query');
    const ours = () =>
      spy.mock.calls.map(([sql]) => String(sql)).filter((sql) => sql.includes('idempotency_keys') && !sql.startsWith('UPDATE idempotency_keys SET locked_until'));
    try {
      expect((await draft(creator.key, 'Counted')).status).toBe(201);
      expect(ours()).toEqual([]);
      spy.mockClear();
      expect((await draft(creator.key, 'Counted', 'count-1')).status).toBe(201);
      expect(ours()).toEqual([expect.stringContaining('INSERT INTO idempotency_keys'), expect.stringContaining('UPDATE idempotency_keys k SET status')]);
      spy.mockClear();
      expect((await draft(creator.key, 'Counted', 'count-1')).headers['idempotent-replayed']).toBe('true');
      expect(ours()).toEqual([expect.stringContaining('INSERT INTO idempotency_keys')]);
    } finally {
      spy.mockRestore();
    }
  });

  it('shares its statements among concurrent requests: 12 keyed drafts arriving while a statement runs take their keys in one, keep their answers in one', async () => {
    // The first request's statements are held until all twelve have asked (as under load,
    // where a statement is in flight when the next requests come): the first runs alone, the
    // eleven others then go together.
    const claims = jest.spyOn(IdempotencyKeys.prototype, 'claim');
    const answers = jest.spyOn(IdempotencyKeys.prototype, 'answer');
    const query = t.db.query.bind(t.db);
    const held = { take: false, keep: false };
    const spy = jest.spyOn(t.db, 'query').mockImplementation(async (sql: string, params?: readonly unknown[]) => {
      if (sql.includes('INSERT INTO idempotency_keys') && !held.take) {
        held.take = true;
        await eventually(async () => claims.mock.calls.length >= 12, 30000, 'the twelve requests to ask for their keys');
      }
      if (sql.includes('UPDATE idempotency_keys k SET status') && !held.keep) {
        held.keep = true;
        await eventually(async () => answers.mock.calls.length >= 12, 30000, 'the twelve answers to be kept');
      }
      return query(sql, params);
    });
    const count = (needle: string) => spy.mock.calls.filter(([sql]) => String(sql).includes(needle)).length;
    const titles = Array.from({ length: 12 }, (_, i) => `Batched ${i}`);
    const metrics = async () => {
      const text = (await t.request('GET', '/metrics', { headers: { authorization: 'Bearer test-admin-token' } })).text;
      const value = (name: string) => Number(text.match(new RegExp(`^${name.replace(/[{}]/g, '\\$&')} (\\d+)$`, 'm'))?.[1] ?? 0);
      return ['statements', 'requests'].flatMap((what) => ['take', 'keep'].map((kind) => value(`svc_idempotency_${what}_total{kind="${kind}"}`)));
    };
    const before = await metrics();
    try {
      const answered = await Promise.all(titles.map((title, i) => draft(creator.key, title, `batch-${i}`)));
      expect(answered.map((a) => [a.status, a.body.title])).toEqual(titles.map((title) => [201, title]));
      expect(count('INSERT INTO idempotency_keys')).toBe(2);
      expect(count('UPDATE idempotency_keys k SET status')).toBe(2);
      // GET /metrics counts them: statements taking and keeping, and the requests they served.
      expect((await metrics()).map((n, i) => n - before[i])).toEqual([2, 2, 12, 12]);
    } finally {
      spy.mockRestore();
      claims.mockRestore();
      answers.mockRestore();
    }
    // Each answer was kept under its own key, and each key replays its own.
    const again = await Promise.all(titles.map((title, i) => draft(creator.key, title, `batch-${i}`)));
    expect(again.map((a) => [a.status, a.headers['idempotent-replayed'], a.body.title])).toEqual(titles.map((title) => [201, 'true', title]));
    for (const title of titles) expect(await drafted(title)).toHaveLength(1);
  });

  it('runs one of two requests sent at once under one key and answers the other 409 or with the replay, never running it', async () => {
    const [a, b] = await Promise.all([draft(creator.key, 'Twice at once', 'twice-1'), draft(creator.key, 'Twice at once', 'twice-1')]);
    const statuses = [a.status, b.status].sort();
    expect([[201, 201], [201, 409]]).toContainEqual(statuses);
    if (statuses[1] === 201) expect(a.text).toBe(b.text);
    expect(await drafted('Twice at once')).toHaveLength(1);
  });

  it('keeps a key a day: older, it is swept, and the key is new again', async () => {
    const first = await draft(creator.key, 'A day old', 'day-1');
    expect(first.status).toBe(201);
    const keys = t.app.get(IdempotentRequests);
    expect(await keys.sweep()).toBe(0);
    expect((await draft(creator.key, 'A day old', 'day-1')).headers['idempotent-replayed']).toBe('true');

    await t.db.query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'day-1'");
    // Past its day, the key is free even before the sweep: another request under it runs.
    const reused = await draft(creator.key, 'A day later', 'day-1');
    expect([reused.status, reused.headers['idempotent-replayed']]).toEqual([201, undefined]);
    await t.db.query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'day-1'");
    expect(await keys.sweep()).toBe(1);
    expect((await t.db.query("SELECT 1 FROM idempotency_keys WHERE key = 'day-1'")).rows).toHaveLength(0);
  });

  it('ignores the header where there is nothing to repeat (GET) and on routes without a caller key', async () => {
    const got = await t.request('GET', '/v1/me', { key: creator.key, headers: { 'idempotency-key': 'k'.repeat(300) } });
    expect(got.status).toBe(200);
    expect(got.headers['idempotent-replayed']).toBeUndefined();

    // The hosted payment page is the processor's, authenticated by its session: no key is kept.
    const seller = await t.accountWithKey({ name: 'Page seller' });
    const buyer = await t.accountWithKey({ scopes: ['models:read'] });
    const model = await publishModel(t, seller.key, { title: 'Paid on the page', price_cents: 1200 });
    const session = await t.request('POST', '/v1/purchases', { key: buyer.key, body: { asset: model.id } });
    const page = new URL(session.body.checkout_url);
    const paid = await t.request('POST', `${page.pathname}${page.search}`, {
      payload: `card_number=${PAYS}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'idempotency-key': 'page-1' },
    });
    expect(paid.status).toBe(200);
    expect((await t.db.query("SELECT 1 FROM idempotency_keys WHERE key = 'page-1'")).rows).toHaveLength(0);
  });
});

describe('Idempotency-Key in the OpenAPI document', () => {
  it('is a header parameter of every POST, whose answers may carry Idempotent-Replayed and 409 idempotency_key_in_use', async () => {
    const t = await startTestApp();
    try {
      const document = (await t.request('GET', OPENAPI_PATH)).body;
      expect(document.components.parameters.IdempotencyKey).toMatchObject({ name: 'Idempotency-Key', in: 'header', required: false, schema: { maxLength: 255 } });
      const posts = Object.entries(document.paths).flatMap(([path, item]: [string, any]) => (item.post ? [[path, item.post]] : [])) as [string, any][];
      expect(posts.length).toBeGreaterThan(20);
      for (const [path, post] of posts) {
        expect([path, post.parameters]).toEqual([path, expect.arrayContaining([{ $ref: '#/components/parameters/IdempotencyKey' }])]);
        expect([path, post.responses['409']?.description]).toEqual([path, expect.stringContaining('idempotency_key_in_use')]);
        const success = Object.keys(post.responses).find((s) => s.startsWith('2'))!;
        expect([path, Object.keys(post.responses[success].headers ?? {})]).toEqual([path, ['Idempotent-Replayed']]);
      }
      for (const item of Object.values(document.paths) as any[]) {
        for (const op of [item.get, item.patch, item.delete].filter(Boolean)) expect(op.parameters ?? []).not.toContainEqual({ $ref: '#/components/parameters/IdempotencyKey' });
      }
    } finally {
      await t.close();
    }
  });
});
