import { generateApiKey } from '../../src/accounts/api-key-secret';
import { ApiKeyCreated } from '../../src/accounts/events';
import { newId } from '../../src/platform/ids';
import { Streams } from '../../src/platform/streams';
import { EventWriter } from '../../src/projection-runner/event-writer';
import { Response, startTestApp } from '../support/app';

/** The error envelope of spec part 7, with the request id in the body and the header. */
function expectError(res: Response, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.body?.error?.code).toBe(code);
  expect(typeof res.body.error.message).toBe('string');
  expect(res.body.error.request_id).toEqual(expect.any(String));
  expect(res.body.error.request_id).toBe(res.headers['x-request-id']);
}

describe('API key authentication (spec part 5)', () => {
  let t: Awaited<ReturnType<typeof startTestApp>>;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  describe('401 missing_credentials', () => {
    it.each([
      ['no Authorization header', undefined],
      ['a Basic scheme', 'Basic abc'],
      ['an empty bearer token', 'Bearer '],
      ['a bare "Bearer"', 'Bearer'],
    ])('for %s', async (_label, authorization) => {
      const res = await t.request('GET', '/v1/me', { headers: authorization === undefined ? {} : { authorization } });
      expectError(res, 401, 'missing_credentials');
    });
  });

  describe('401 invalid_key', () => {
    it('for a key with the wrong prefix but the right length', async () => {
      const { key } = await t.accountWithKey();
      const wrongPrefix = `sk_test_${key.slice('svc_test_'.length)}`;
      expectError(await t.request('GET', '/v1/me', { key: wrongPrefix }), 401, 'invalid_key');
      // The real key still works, so the 401 is about the prefix.
      expect((await t.request('GET', '/v1/me', { key })).status).toBe(200);
    });

    it('for a key of the wrong length', async () => {
      expectError(await t.request('GET', '/v1/me', { key: 'svc_test_abc' }), 401, 'invalid_key');
    });

    it('for a well-formed key that was never issued', async () => {
      const { key } = generateApiKey('test');
      expectError(await t.request('GET', '/v1/me', { key }), 401, 'invalid_key');
    });

    it('for a known lookup id with the wrong secret', async () => {
      const { key } = await t.accountWithKey();
      const last = key[key.length - 1];
      const tampered = key.slice(0, -1) + (last === 'a' ? 'b' : 'a');
      expectError(await t.request('GET', '/v1/me', { key: tampered }), 401, 'invalid_key');
    });

    it('for a revoked key', async () => {
      const { key, keyId } = await t.accountWithKey();
      expect((await t.request('GET', '/v1/me', { key })).status).toBe(200);
      const revoked = await t.admin('POST', `/admin/keys/${keyId}/revoke`);
      expect(revoked.status).toBe(200);
      expect(revoked.body).toEqual({ id: keyId, revoked: true });
      const res = await t.request('GET', '/v1/me', { key });
      expectError(res, 401, 'invalid_key');
      expect(res.body.error.message).toMatch(/revoked/i);
    });

    it('for an expired key', async () => {
      const { accountId } = await t.accountWithKey();
      const { key, lookupId, secretHash } = generateApiKey('test');
      const keyId = newId('key');
      const created: ApiKeyCreated = {
        key_id: keyId,
        account_id: accountId,
        mode: 'test',
        tier: 'free',
        name: 'expired',
        scopes: [],
        lookup_id: lookupId,
        secret_hash: secretHash,
        active: true,
        expires_at: new Date(Date.now() - 60_000).toISOString(),
        created_at: new Date(Date.now() - 120_000).toISOString(),
      };
      await t.app.get(EventWriter).append(Streams.apiKey('test', keyId), [{ type: 'ApiKeyCreated', data: { ...created } }], 'no_stream');
      // The key is in the read model (listed for its account), yet refused.
      const listed = await t.admin('GET', `/admin/keys?account=${accountId}`);
      expect(listed.body.items.map((k: any) => k.id)).toContain(keyId);
      const res = await t.request('GET', '/v1/me', { key });
      expectError(res, 401, 'invalid_key');
      expect(res.body.error.message).toMatch(/expired/i);
    });
    // A revocation on another instance: test/accounts/kept-keys.e2e.spec.ts.
  });

  describe('403 scope_required', () => {
    it('names the scope the endpoint needs, and the key with that scope gets through', async () => {
      const { key: narrow } = await t.accountWithKey({ scopes: ['models:read'] });
      const res = await t.request('GET', '/v1/balance_transactions', { key: narrow });
      expectError(res, 403, 'scope_required');
      expect(res.body.error.message).toContain('payouts:read');

      const { key: allowed } = await t.accountWithKey({ scopes: ['models:read', 'payouts:read'] });
      expect((await t.request('GET', '/v1/balance_transactions', { key: allowed })).status).toBe(200);
      const { key: unrestricted } = await t.accountWithKey({ scopes: [] });
      expect((await t.request('GET', '/v1/balance_transactions', { key: unrestricted })).status).toBe(200);
    });
  });

  describe('modes and tiers', () => {
    it('a live key is in live mode and a test key in test mode', async () => {
      const { key: live } = await t.accountWithKey({ mode: 'live' });
      expect(live.startsWith('svc_live_')).toBe(true);
      const liveMe = await t.request('GET', '/v1/me', { key: live });
      expect(liveMe.status).toBe(200);
      expect(liveMe.body.key.mode).toBe('live');
      const { key: test } = await t.accountWithKey({ mode: 'test' });
      expect(test.startsWith('svc_test_')).toBe(true);
      expect((await t.request('GET', '/v1/me', { key: test })).body.key.mode).toBe('test');
    });

    it('premium keys always carry inference:run; live premium starts inactive, test premium active', async () => {
      const account = await t.admin('POST', '/admin/accounts', { name: 'Premium Co', email: 'premium@example.com' });
      expect(account.status).toBe(201);
      const create = (mode: string) =>
        t.admin('POST', '/admin/keys', { account: account.body.id, mode, tier: 'premium', scopes: ['models:read'] });

      const live = await create('live');
      expect(live.status).toBe(201);
      expect(live.body).toMatchObject({ mode: 'live', tier: 'premium', active: false });
      expect([...live.body.scopes].sort()).toEqual(['inference:run', 'models:read']);

      const test = await create('test');
      expect(test.status).toBe(201);
      expect(test.body).toMatchObject({ mode: 'test', tier: 'premium', active: true });
      expect([...test.body.scopes].sort()).toEqual(['inference:run', 'models:read']);

      const me = await t.request('GET', '/v1/me', { key: test.body.key });
      expect(me.status).toBe(200);
      expect([...me.body.key.scopes].sort()).toEqual(['inference:run', 'models:read']);
    });
  });
});
