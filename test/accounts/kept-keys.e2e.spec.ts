import { generateApiKey } from '../../src/accounts/api-key-secret';
import { ApiKeyCreated } from '../../src/accounts/events';
import { KeptAccounts } from '../../src/accounts/kept-accounts';
import { newId } from '../../src/platform/ids';
import { Streams } from '../../src/platform/streams';
import { EventWriter } from '../../src/projection-runner/event-writer';
import { startTestApp, TestApp } from '../support/app';

/**
 * Issue 27: keys, accounts and prices are kept in each instance and changed by their events,
 * so a request reads none of them, yet a revocation or a new price reaches every instance
 * through the log (far sooner than the copy's max age), a copy the log stops confirming is
 * read again, and unknown keys keep nothing.
 */
describe('Keys, accounts and prices kept in process', () => {
  let t: Awaited<ReturnType<typeof startTestApp>>;
  let second: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
    second = await startTestApp({ shared: t.database });
  });
  afterAll(async () => {
    await second.close();
    await t.close();
  });

  /** Queries of the key read model by lookup id, from here on. */
  function countKeyLookups(): { count: () => number; stop: () => void } {
    const spy = jest.spyOn(t.db, 'query');
    const count = () => spy.mock.calls.filter(([sql]) => String(sql).includes('FROM api_keys WHERE lookup_id')).length;
    return { count, stop: () => spy.mockRestore() };
  }

  /** Milliseconds until `refused` holds on the second instance, polling it; throws after limitMs. */
  async function msUntil(refused: () => Promise<boolean>, limitMs: number): Promise<number> {
    const started = performance.now();
    while (!(await refused())) {
      if (performance.now() - started > limitMs) throw new Error(`still not refused after ${limitMs} ms`);
      await new Promise((r) => setTimeout(r, 2));
    }
    return performance.now() - started;
  }

  it('serves a key it has read without reading it again', async () => {
    const { key } = await t.accountWithKey();
    const lookups = countKeyLookups();
    try {
      for (let i = 0; i < 20; i++) expect((await t.request('GET', '/v1/me', { key })).status).toBe(200);
      expect(lookups.count()).toBeLessThanOrEqual(1);
    } finally {
      lookups.stop();
    }
  });

  it('a key revoked on one instance is refused by another that kept it, through the log, long before its copy would expire', async () => {
    const { key, keyId } = await t.accountWithKey();
    // Kept by the second instance first: the refusal below cannot come from a first read.
    expect((await second.request('GET', '/v1/me', { key })).status).toBe(200);
    expect((await t.admin('POST', `/admin/keys/${keyId}/revoke`)).status).toBe(200);
    // The copy's max age is 60 s; the event reaches the second instance within milliseconds
    // (issue 27's bound, 100 ms, is measured by bench/revocation.js, not asserted here).
    await msUntil(async () => (await second.request('GET', '/v1/me', { key })).status === 401, 2000);
    const res = await second.request('GET', '/v1/me', { key });
    expect(res.body.error).toMatchObject({ code: 'invalid_key', message: expect.stringMatching(/revoked/i) });
    // And on the instance that revoked it, at once.
    expect((await t.request('GET', '/v1/me', { key })).status).toBe(401);
  });

  it('a kept key is refused once its kept expires_at passes', async () => {
    const { accountId } = await t.accountWithKey();
    const { key, lookupId, secretHash } = generateApiKey('test');
    const keyId = newId('key');
    const expiresAt = Date.now() + 1500;
    const created: ApiKeyCreated = {
      key_id: keyId,
      account_id: accountId,
      mode: 'test',
      tier: 'free',
      name: 'short-lived',
      scopes: [],
      lookup_id: lookupId,
      secret_hash: secretHash,
      active: true,
      expires_at: new Date(expiresAt).toISOString(),
      created_at: new Date().toISOString(),
    };
    await t.app.get(EventWriter).append(Streams.apiKey('test', keyId), [{ type: 'ApiKeyCreated', data: { ...created } }], 'no_stream');
    expect((await t.request('GET', '/v1/me', { key })).status).toBe(200);
    await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now()) + 50));
    const res = await t.request('GET', '/v1/me', { key });
    expect(res.status).toBe(401);
    expect(res.body.error.message).toMatch(/expired/i);
  });

  it('a new price reaches the instance that set it at once and another one through the log', async () => {
    const { key } = await t.accountWithKey();
    const priceOn = async (app: TestApp) =>
      (await app.request('GET', '/v1/inference/models', { key })).body.items.find((m: any) => m.id === 'svc-fast-8b').pricing;
    // Both instances have read the prices before the change.
    const before = await priceOn(second);
    expect(await priceOn(t)).toEqual(before);
    const next = { input_usd_per_million: before.input_usd_per_million + 0.25, output_usd_per_million: before.output_usd_per_million + 0.5 };
    expect((await t.admin('POST', '/admin/inference/prices', { model: 'svc-fast-8b', ...next })).status).toBe(200);
    expect(await priceOn(t)).toEqual(next);
    await msUntil(async () => JSON.stringify(await priceOn(second)) === JSON.stringify(next), 2000);
  });

  it('unknown keys cost one lookup each and keep nothing; kept keys stay within AUTH_CACHE_SIZE', async () => {
    const small = await startTestApp({ shared: t.database, env: { AUTH_CACHE_SIZE: '3' } });
    const lookups = countKeyLookups();
    try {
      const randomKeys = Array.from({ length: 500 }, () => generateApiKey('test').key);
      for (let i = 0; i < randomKeys.length; i += 50) {
        const answers = await Promise.all(randomKeys.slice(i, i + 50).map((key) => small.request('GET', '/v1/me', { key })));
        for (const res of answers) expect(res.body.error.code).toBe('invalid_key');
      }
      expect(lookups.count()).toBe(randomKeys.length);
      expect(small.app.get(KeptAccounts).size).toBe(0);

      // More real keys than the bound: each still authenticates, read again once dropped.
      const keys = await Promise.all(Array.from({ length: 5 }, () => t.accountWithKey()));
      for (let round = 0; round < 2; round++) {
        for (const { key } of keys) expect((await small.request('GET', '/v1/me', { key })).status).toBe(200);
      }
      expect(small.app.get(KeptAccounts).size).toBe(3);
    } finally {
      lookups.stop();
      await small.close();
    }
  });

  it('a copy the log stops confirming is read again after AUTH_CACHE_MAX_AGE', async () => {
    const unfollowed = await startTestApp({ shared: t.database, env: { AUTH_CACHE_MAX_AGE: '1' } });
    try {
      const { key, keyId } = await t.accountWithKey();
      expect((await unfollowed.request('GET', '/v1/me', { key })).status).toBe(200);
      // Its subscription to the log ends, as when it cannot read the log: no event reaches it.
      await unfollowed.app.get(KeptAccounts).beforeApplicationShutdown();
      expect((await t.admin('POST', `/admin/keys/${keyId}/revoke`)).status).toBe(200);
      await msUntil(async () => (await unfollowed.request('GET', '/v1/me', { key })).status === 401, 5000);
    } finally {
      await unfollowed.close();
    }
  });
});
