import { EVENT_STORE, EventStore } from '../../src/event-store/event-store';
import { Streams } from '../../src/platform/streams';
import { startTestApp, TestApp } from '../support/app';
import { stallProjections } from '../support/stalled-projections';

/**
 * Issue 9: a command decides on the streams it appends to, never on a read model. The
 * account-then-key case: with the accounts projection behind, the key created for an
 * account right after its creation was 404 "No such account".
 */
describe('account commands decide on streams, not on lagging read models', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('creates keys, grants credits and revokes a key for an account created a moment ago, while no projection runs', async () => {
    const stalled = await stallProjections(t);
    const account = await t.admin('POST', '/admin/accounts', { name: 'Lagging Robotics', email: 'ops@lagging.test' });
    expect(account.status).toBe(201);
    // The read model has not seen the account: only the streams know it.
    expect((await t.admin('GET', `/admin/accounts/${account.body.id}`)).status).toBe(404);

    const byId = await t.admin('POST', '/admin/keys', { account: account.body.id, mode: 'test', scopes: ['models:read'] });
    expect([byId.status, byId.body.error]).toEqual([201, undefined]);
    const bySlug = await t.admin('POST', '/admin/keys', { account: 'lagging-robotics', mode: 'live' });
    expect([bySlug.status, bySlug.body.error]).toEqual([201, undefined]);
    const credits = await t.admin('POST', '/admin/credits', { account: 'lagging-robotics', mode: 'test', amount: 10 });
    expect([credits.status, credits.body]).toEqual([200, { account: account.body.id, mode: 'test', credits: 10 }]);
    const revoked = await t.admin('POST', `/admin/keys/${bySlug.body.id}/revoke`);
    expect([revoked.status, revoked.body]).toEqual([200, { id: bySlug.body.id, revoked: true }]);

    // Once the projections run, the readers see what the commands answered.
    await stalled.resume();
    expect((await t.admin('GET', '/admin/accounts/lagging-robotics')).body).toEqual(account.body);
    const keys = (await t.admin('GET', `/admin/keys?account=${account.body.id}`)).body.items;
    expect(keys.map((k: any) => [k.id, k.mode, k.scopes, k.revoked_at === null]).sort()).toEqual(
      [
        [byId.body.id, 'test', ['models:read'], true],
        [bySlug.body.id, 'live', [], false],
      ].sort(),
    );
    const me = await t.request('GET', '/v1/me', { key: byId.body.key });
    expect([me.status, me.body.id, me.body.slug]).toEqual([200, account.body.id, 'lagging-robotics']);
    expect((await t.request('GET', '/v1/me', { key: bySlug.body.key })).status).toBe(401);
    const again = await t.admin('POST', '/admin/credits', { account: account.body.id, mode: 'test', amount: 5 });
    expect(again.body.credits).toBe(15);
  });

  it('a slug claimed by a creation that never happened names no account, and stays taken', async () => {
    // What a create-account that failed between its slug claim and AccountCreated leaves.
    const store = t.app.get<EventStore>(EVENT_STORE);
    await store.append(Streams.accountSlug('ghost-works'), [{ type: 'AccountSlugClaimed', data: { slug: 'ghost-works', account_id: 'acct_ghost' } }], 'no_stream');
    const calls: [string, unknown][] = [
      ['/admin/keys', { account: 'ghost-works', mode: 'test' }],
      ['/admin/keys', { account: 'acct_ghost', mode: 'test' }],
      ['/admin/credits', { account: 'ghost-works', mode: 'test', amount: 1 }],
      ['/admin/payouts/pause', { account: 'ghost-works', mode: 'test' }],
      ['/admin/payouts/run', { account: 'ghost-works', mode: 'test' }],
      ['/admin/webhook_endpoints', { account: 'ghost-works', mode: 'test', url: 'http://localhost:4242/hooks' }],
    ];
    for (const [path, body] of calls) {
      const res = await t.admin('POST', path, body);
      expect([path, res.status, res.body.error?.code]).toEqual([path, 404, 'not_found']);
    }
    expect((await t.admin('POST', '/admin/keys/key_missing/revoke')).status).toBe(404);
    const taken = await t.admin('POST', '/admin/accounts', { name: 'Ghost Works', email: 'g@example.com', slug: 'ghost-works' });
    expect([taken.status, taken.body.error.code]).toEqual([409, 'conflict']);
  });

  it('accounts of one name never run out of slugs: the base, "-2", then a random suffix', async () => {
    const slugs: string[] = [];
    for (let i = 0; i < 25; i++) {
      const created = await t.admin('POST', '/admin/accounts', { name: 'Same Name Robotics', email: `s${i}@example.com` });
      expect(created.status).toBe(201);
      slugs.push(created.body.slug);
    }
    expect(slugs.slice(0, 2)).toEqual(['same-name-robotics', 'same-name-robotics-2']);
    for (const slug of slugs.slice(2)) expect(slug).toMatch(/^same-name-robotics-[a-z0-9]{6}$/);
    expect(new Set(slugs).size).toBe(25);
  });
});
