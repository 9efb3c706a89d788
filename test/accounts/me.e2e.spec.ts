import { startTestApp, TestApp } from '../support/app';

describe('GET /v1/me', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('returns the account behind the key with the key mode and scopes', async () => {
    const { accountId, key } = await t.accountWithKey({ name: 'Kuka Lab', mode: 'live', scopes: ['models:read'] });
    const res = await t.request('GET', '/v1/me', { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: accountId,
      slug: 'kuka-lab',
      name: 'Kuka Lab',
      email: expect.stringMatching(/@example\.com$/),
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      key: { mode: 'live', scopes: ['models:read'] },
      credits: 0,
    });
  });
});
