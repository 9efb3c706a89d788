import { startTestApp, TestApp } from '../support/app';
import { stallProjections } from '../support/stalled-projections';

/**
 * Issue 9: endpoint commands find the endpoint (and, for the operator, the account) on
 * their streams and answer from the events they wrote, never from webhook_endpoints.
 */
describe('webhook endpoint commands decide on streams, not on lagging read models', () => {
  let t: TestApp;
  let owner: { accountId: string; key: string };
  let other: { accountId: string; key: string };
  beforeAll(async () => {
    t = await startTestApp();
    owner = await t.accountWithKey({ scopes: ['webhooks:write'] });
    other = await t.accountWithKey({ scopes: ['webhooks:write'] });
  });
  afterAll(() => t.close());

  it('creates, updates and deletes endpoints right after creating them, while no projection runs', async () => {
    const stalled = await stallProjections(t);
    const created = await t.request('POST', '/v1/webhook_endpoints', { key: owner.key, body: { url: 'http://localhost:4242/hooks', events: ['payout.paid'] } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ object: 'webhook_endpoint', url: 'http://localhost:4242/hooks', events: ['payout.paid'], enabled: true, description: '' });
    expect(created.body.secret).toMatch(/^whsec_test_/);
    // The read model has not seen it: only the stream knows it.
    expect((await t.request('GET', `/v1/webhook_endpoints/${created.body.id}`, { key: owner.key })).status).toBe(404);

    const updated = await t.request('PATCH', `/v1/webhook_endpoints/${created.body.id}`, { key: owner.key, body: { description: 'shop', enabled: false } });
    expect([updated.status, updated.body.description, updated.body.enabled, updated.body.url]).toEqual([200, 'shop', false, 'http://localhost:4242/hooks']);
    expect(updated.body.secret).toBeUndefined();
    const unchanged = await t.request('PATCH', `/v1/webhook_endpoints/${created.body.id}`, { key: owner.key, body: { description: 'shop' } });
    expect(unchanged.body).toEqual(updated.body);
    // Another account's endpoint is absent (404, never 403).
    expect((await t.request('PATCH', `/v1/webhook_endpoints/${created.body.id}`, { key: other.key, body: { enabled: true } })).status).toBe(404);
    expect((await t.request('DELETE', `/v1/webhook_endpoints/${created.body.id}`, { key: other.key })).status).toBe(404);

    // The operator's API, for an account created a moment ago, by slug.
    await t.admin('POST', '/admin/accounts', { name: 'Listener Co', email: 'l@example.com' });
    const listener = await t.admin('POST', '/admin/webhook_endpoints', { account: 'listener-co', mode: 'test', url: 'http://127.0.0.1:4243/in' });
    expect([listener.status, listener.body.url]).toEqual([201, 'http://127.0.0.1:4243/in']);
    const removed = await t.admin('DELETE', `/admin/webhook_endpoints/${listener.body.id}`);
    expect([removed.status, removed.body]).toEqual([200, { id: listener.body.id, deleted: true }]);
    expect((await t.admin('DELETE', `/admin/webhook_endpoints/${listener.body.id}`)).status).toBe(404);

    // Once the projection runs, the reader's view is what the last command answered.
    await stalled.resume();
    const read = await t.request('GET', `/v1/webhook_endpoints/${created.body.id}`, { key: owner.key });
    expect(read.body).toEqual(updated.body);
    const { secret: _secret, ...createdView } = created.body;
    expect(createdView).toEqual({ ...read.body, description: '', enabled: true, updated_at: created.body.created_at });
  });
});
