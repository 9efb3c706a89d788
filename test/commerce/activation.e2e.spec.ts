import { startTestApp, TestApp } from '../support/app';
import { eventsOfType, pathOf, PAYS, payOnPage } from './commerce-client';

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
});
