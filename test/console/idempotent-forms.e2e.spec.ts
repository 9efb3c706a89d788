import { startTestApp, TestApp } from '../support/app';
import { ConsoleClient } from './console-client';

const keyOf = (page: string): string => {
  const key = /name="_idempotency_key" value="([^"]+)"/.exec(page)?.[1];
  if (!key) throw new Error('no idempotency key on the page');
  return key;
};

/** Issue 39: each rendered form carries its own idempotency key; the console honours it as the API does. */
describe('the console: one idempotency key per form render', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t?.close());

  const creditsOf = async (browser: ConsoleClient, accountId: string) => /data-credits>(\d+)</.exec((await browser.get(`/console/accounts?q=${accountId}`)).text)?.[1];

  it('every render of a form carries a fresh key', async () => {
    const browser = new ConsoleClient(t, '10.1.0.1');
    await browser.signInAsOperator();
    const account = await t.accountWithKey();
    const first = (await browser.get(`/console/accounts?q=${account.accountId}`)).text;
    const second = (await browser.get(`/console/accounts?q=${account.accountId}`)).text;
    expect(keyOf(first)).toMatch(/^[0-9a-f-]{36}$/);
    expect(keyOf(first)).not.toBe(keyOf(second));
  });

  it('a form sent twice (double click, browser re-POST) grants once and answers the same redirect', async () => {
    const browser = new ConsoleClient(t, '10.1.0.2');
    await browser.signInAsOperator();
    const account = await t.accountWithKey();
    const page = (await browser.get(`/console/accounts?q=${account.accountId}`)).text;
    const form = { amount: '5', _csrf: ConsoleClient.csrfOf(page), _idempotency_key: keyOf(page) };
    const first = await browser.post(`/console/accounts/${account.accountId}/credits`, form);
    const again = await browser.post(`/console/accounts/${account.accountId}/credits`, form);
    expect(first.status).toBe(303);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect([again.status, again.headers.location, again.headers['idempotent-replayed']]).toEqual([303, first.headers.location, 'true']);
    expect(await creditsOf(browser, account.accountId)).toBe('5');
    // The same fields in another order are the same form.
    const reordered = await browser.post(`/console/accounts/${account.accountId}/credits`, { _idempotency_key: form._idempotency_key, _csrf: form._csrf, amount: '5' });
    expect(reordered.headers['idempotent-replayed']).toBe('true');
    expect(await creditsOf(browser, account.accountId)).toBe('5');
  });

  it('the same render sent with other values is refused with a clear message, and nothing changes', async () => {
    const browser = new ConsoleClient(t, '10.1.0.3');
    await browser.signInAsOperator();
    const account = await t.accountWithKey();
    const page = (await browser.get(`/console/accounts?q=${account.accountId}`)).text;
    const form = { amount: '5', _csrf: ConsoleClient.csrfOf(page), _idempotency_key: keyOf(page) };
    expect((await browser.post(`/console/accounts/${account.accountId}/credits`, form)).status).toBe(303);
    const other = await browser.post(`/console/accounts/${account.accountId}/credits`, { ...form, amount: '7' });
    expect(other.status).toBe(400);
    expect(other.text).toContain('This form was already sent with other values');
    expect(await creditsOf(browser, account.accountId)).toBe('5');
    // A new render is a new key: the next grant is done.
    const next = (await browser.get(`/console/accounts?q=${account.accountId}`)).text;
    expect((await browser.post(`/console/accounts/${account.accountId}/credits`, { amount: '7', _csrf: ConsoleClient.csrfOf(next), _idempotency_key: keyOf(next) })).status).toBe(303);
    expect(await creditsOf(browser, account.accountId)).toBe('12');
  });

  it('a refused form is refused again, the same page, without running twice', async () => {
    const browser = new ConsoleClient(t, '10.1.0.4');
    await browser.signInAsOperator();
    const account = await t.accountWithKey();
    const page = (await browser.get(`/console/accounts?q=${account.accountId}`)).text;
    const form = { amount: 'lots', _csrf: ConsoleClient.csrfOf(page), _idempotency_key: keyOf(page) };
    const first = await browser.post(`/console/accounts/${account.accountId}/credits`, form);
    const again = await browser.post(`/console/accounts/${account.accountId}/credits`, form);
    expect(first.status).toBe(400);
    expect([again.status, again.text, again.headers['idempotent-replayed']]).toEqual([400, first.text, 'true']);
    expect(await creditsOf(browser, account.accountId)).toBe('0');
  });

  it('a key belongs to its session: another operator session using it runs its own form', async () => {
    const one = new ConsoleClient(t, '10.1.0.5');
    const two = new ConsoleClient(t, '10.1.0.6');
    await one.signInAsOperator();
    await two.signInAsOperator();
    const account = await t.accountWithKey();
    const page = (await one.get(`/console/accounts?q=${account.accountId}`)).text;
    const key = keyOf(page);
    expect((await one.post(`/console/accounts/${account.accountId}/credits`, { amount: '5', _csrf: ConsoleClient.csrfOf(page), _idempotency_key: key })).status).toBe(303);
    const theirs = (await two.get(`/console/accounts?q=${account.accountId}`)).text;
    const res = await two.post(`/console/accounts/${account.accountId}/credits`, { amount: '5', _csrf: ConsoleClient.csrfOf(theirs), _idempotency_key: key });
    expect([res.status, res.headers['idempotent-replayed']]).toEqual([303, undefined]);
    expect(await creditsOf(one, account.accountId)).toBe('10');
  });
});
