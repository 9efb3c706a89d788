import { startTestApp, TestApp } from '../support/app';

describe('GET /v1/me', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('returns the account behind the key with the key mode and scopes', async () => {
    const { accountId, key, keyId } = await t.accountWithKey({ name: 'Kuka Lab', mode: 'live', scopes: ['models:read'] });
    const res = await t.request('GET', '/v1/me', { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: accountId,
      slug: 'kuka-lab',
      name: 'Kuka Lab',
      email: expect.stringMatching(/@example\.com$/),
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      key: { id: keyId, mode: 'live', tier: 'free', scopes: ['models:read'], expires_at: null },
      credits: 0,
    });
  });

  it('names the key by its public id, never its secret, with its tier and expiry (issue 44)', async () => {
    const { accountId } = await t.accountWithKey({ name: 'Expiring Lab' });
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const created = await t.admin('POST', '/admin/keys', { account: accountId, mode: 'test', tier: 'premium', expires_at: expiresAt });
    expect(created.status).toBe(201);
    const res = await t.request('GET', '/v1/me', { key: created.body.key });
    expect(res.status).toBe(200);
    expect(res.body.key).toEqual({ id: created.body.id, mode: 'test', tier: 'premium', scopes: [], expires_at: expiresAt });
    expect(res.body.key.id).toMatch(/^key_/);
    // The secret appears nowhere in the answer.
    expect(res.text).not.toContain(created.body.key);
    expect(res.text).not.toContain(created.body.key.slice('svc_test_'.length));
    // The same id the operator's key list shows.
    const listed = (await t.admin('GET', `/admin/keys?account=${accountId}`)).body.items.map((k: any) => k.id);
    expect(listed).toContain(res.body.key.id);
  });
});
