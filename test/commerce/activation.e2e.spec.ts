import { startTestApp, TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { eventsOfType, PAST_EXPIRY_MS, pathOf, PAYS, payOnPage, withClockAhead } from './commerce-client';

describe('premium key activation', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const keyOf = async (accountId: string, keyId: string) =>
    (await t.admin('GET', `/admin/keys?account=${accountId}`)).body.items.find((k: any) => k.id === keyId);

  it('creates a live premium key inactive with a 20 USD activation checkout; paying it activates the key through an event', async () => {
    const account = await t.admin('POST', '/admin/accounts', { name: 'Premium Co', email: 'p@example.com' });
    const key = await t.admin('POST', '/admin/keys', { account: account.body.id, mode: 'live', tier: 'premium' });
    expect(key.status).toBe(201);
    expect(key.body).toMatchObject({ active: false, activation_checkout_url: expect.stringMatching(/\/checkout\/cs_live_/) });
    expect((await keyOf(account.body.id, key.body.id)).active).toBe(false);

    const page = await t.request('GET', pathOf(key.body.activation_checkout_url));
    expect(page.status).toBe(200);
    expect(page.text).toContain('Pay 20.00 USD');
    expect((await payOnPage(t, key.body.activation_checkout_url, PAYS)).status).toBe(200);

    expect((await keyOf(account.body.id, key.body.id)).active).toBe(true);
    const activated = (await eventsOfType(t, 'ApiKeyActivated')).filter((e) => e.data.key_id === key.body.id);
    expect(activated).toEqual([{ stream_id: `apikey-live-${key.body.id}`, data: expect.objectContaining({ account_id: account.body.id, mode: 'live' }) }]);
    // Paying the activation again records nothing more.
    expect((await payOnPage(t, key.body.activation_checkout_url, PAYS)).status).toBe(200);
    expect((await eventsOfType(t, 'ApiKeyActivated')).filter((e) => e.data.key_id === key.body.id)).toHaveLength(1);
    expect((await eventsOfType(t, 'SaleRecorded')).filter((e) => e.data.account_id === account.body.id)).toEqual([]);
  });

  it('activates test premium keys at once, with no checkout, and gives free keys none', async () => {
    const account = await t.admin('POST', '/admin/accounts', { name: 'Test Premium', email: 'tp@example.com' });
    const test = await t.admin('POST', '/admin/keys', { account: account.body.id, mode: 'test', tier: 'premium' });
    const free = await t.admin('POST', '/admin/keys', { account: account.body.id, mode: 'live' });
    expect(test.body).toMatchObject({ active: true, activation_checkout_url: null });
    expect(free.body).toMatchObject({ active: true, activation_checkout_url: null });
  });

  it('leaves the key inactive when the activation card is declined', async () => {
    const account = await t.admin('POST', '/admin/accounts', { name: 'Declined Co', email: 'd@example.com' });
    const key = await t.admin('POST', '/admin/keys', { account: account.body.id, mode: 'live', tier: 'premium' });
    expect((await payOnPage(t, key.body.activation_checkout_url, '4000000000000002')).status).toBe(402);
    expect((await keyOf(account.body.id, key.body.id)).active).toBe(false);
  });

  it('reopens a lapsed activation with svc keys activation (POST /admin/keys/{id}/activation), and keys list shows the open one', async () => {
    const account = await t.admin('POST', '/admin/accounts', { name: 'Lapsed Co', email: 'lapsed@example.com' });
    const key = await t.admin('POST', '/admin/keys', { account: account.body.id, mode: 'live', tier: 'premium' });
    const listed = () => keyOf(account.body.id, key.body.id);
    await eventually(async () => (await listed()).activation_checkout_url === key.body.activation_checkout_url, 15000, 'the open activation listed');

    await withClockAhead(PAST_EXPIRY_MS, async () => {
      // The first checkout lapsed: the page refuses it and the list shows no open activation.
      expect((await payOnPage(t, key.body.activation_checkout_url, PAYS)).status).toBe(400);
      expect(await listed()).toMatchObject({ active: false, activation_checkout_url: null });

      const reopened = await t.admin('POST', `/admin/keys/${key.body.id}/activation`);
      expect(reopened.status).toBe(200);
      expect(reopened.body).toEqual({ id: key.body.id, active: false, activation_checkout_url: expect.stringMatching(/\/checkout\/cs_live_/), activation_expires_at: expect.any(String) });
      expect(reopened.body.activation_checkout_url).not.toBe(key.body.activation_checkout_url);
      await eventually(async () => (await listed()).activation_checkout_url === reopened.body.activation_checkout_url, 15000, 'the new activation listed');
      expect((await payOnPage(t, reopened.body.activation_checkout_url, PAYS)).status).toBe(200);
    });
    await eventually(async () => (await listed()).active === true, 15000, 'the key active');
    expect((await listed()).activation_checkout_url).toBeNull();

    // Nothing to activate: an active key, a free key, a revoked key, a key that does not exist.
    const active = await t.admin('POST', `/admin/keys/${key.body.id}/activation`);
    expect([active.status, active.body.error.code]).toEqual([400, 'already_active']);
    const free = await t.admin('POST', '/admin/keys', { account: account.body.id, mode: 'live' });
    expect((await t.admin('POST', `/admin/keys/${free.body.id}/activation`)).body.error.code).toBe('already_active');
    const revoked = await t.admin('POST', '/admin/keys', { account: account.body.id, mode: 'live', tier: 'premium' });
    await t.admin('POST', `/admin/keys/${revoked.body.id}/revoke`);
    expect((await t.admin('POST', `/admin/keys/${revoked.body.id}/activation`)).body.error.code).toBe('key_revoked');
    const missing = await t.admin('POST', '/admin/keys/key_doesnotexist/activation');
    expect([missing.status, missing.body.error.code]).toEqual([404, 'not_found']);
    expect((await eventsOfType(t, 'ApiKeyActivated')).filter((e) => e.data.key_id === key.body.id)).toHaveLength(1);
  });
});
