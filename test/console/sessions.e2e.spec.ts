import { ADMIN_TOKEN, startTestApp, TestApp } from '../support/app';
import { publishModel } from '../catalog/catalog-client';
import { ConsoleClient } from './console-client';

/** Issue 26: signing in both ways, the session cookie, CSRF, roles and scopes, escaping. */
describe('the console: sessions and what they may see', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t?.close());

  it('signs an operator in with the admin token: an HttpOnly SameSite=Strict session cookie, and the overview', async () => {
    const browser = new ConsoleClient(t);
    const signedIn = await browser.signInAsOperator();
    expect(signedIn.status).toBe(303);
    const cookie = [signedIn.headers['set-cookie']].flat().find((c) => String(c).startsWith('console_session='))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    expect(cookie).toMatch(/Path=\/console/);
    expect(cookie).not.toMatch(/Secure/); // plain http here; Secure when served over https
    expect(cookie).not.toContain(ADMIN_TOKEN);
    const overview = await browser.get('/console/overview');
    expect(overview.status).toBe(200);
    expect(overview.text).toContain('Read models serving');
    expect(overview.text).toContain('data-card="ready"><span class="badge good">ready</span>');
    expect(overview.text).toContain('data-mode="test"');
    expect(overview.headers['content-security-policy']).toContain("script-src 'self'");
    expect(overview.headers['content-security-policy']).not.toContain('unsafe-inline');
  });

  it('links its scripts and styles under hashed names, served immutable; pages stay no-store (issue 43)', async () => {
    const browser = new ConsoleClient(t, '10.0.0.9');
    await browser.signInAsOperator();
    const page = await browser.get('/console/overview');
    expect(page.headers['cache-control']).toBe('no-store');
    const links = [...page.text.matchAll(/(?:href|src)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]);
    expect(links).toHaveLength(4);
    for (const link of links) {
      expect(link).toMatch(/^\/console\/assets\/(console|uPlot)\.[0-9a-f]{10}\.(js|css|iife\.min\.js|min\.css)$/);
      const asset = await browser.get(link);
      expect([asset.status, asset.headers['cache-control']]).toEqual([200, 'public, max-age=31536000, immutable']);
      expect(asset.headers['content-type']).toMatch(link.endsWith('.js') ? /^application\/javascript/ : /^text\/css/);
      expect(asset.headers['content-security-policy']).toContain("default-src 'none'");
    }
    const script = links.find((l) => /\/console\.[0-9a-f]{10}\.js$/.test(l))!;
    expect((await browser.get(script.replace(/\.[0-9a-f]{10}\./, '.'))).status).toBe(404); // only hashed names are served
    expect((await browser.get(script.replace(/\.([0-9a-f]{10})\./, '.0000000000.'))).status).toBe(404);
  });

  it('signs a creator in with an API key, which is never stored: only its session, in its own mode', async () => {
    const creator = await t.accountWithKey({ mode: 'live', scopes: ['payouts:read'] });
    const browser = new ConsoleClient(t);
    expect((await browser.signIn('creator', creator.key)).status).toBe(303);
    const home = await browser.get('/console/home');
    expect(home.status).toBe(200);
    expect(home.text).toContain('data-mode="live"');
    expect(home.text).toContain('Available');
    const stored = await t.db.query<{ row: string }>('SELECT row_to_json(s)::text AS row FROM console_sessions s');
    expect(stored.rows.map((r) => r.row).join()).not.toContain(creator.key);
    expect(browser.cookie('console_session')).not.toContain(creator.key);
  });

  it('a wrong token or key: the sign-in page again with a clear message, and no session', async () => {
    const browser = new ConsoleClient(t, '10.0.0.2');
    const wrongToken = await browser.signIn('operator', 'not-the-token');
    expect([wrongToken.status, wrongToken.text]).toEqual([401, expect.stringContaining('That admin token is not valid.')]);
    const wrongKey = await browser.signIn('creator', `svc_test_${'a'.repeat(40)}`);
    expect([wrongKey.status, wrongKey.text]).toEqual([401, expect.stringContaining('That API key was not accepted')]);
    expect(browser.cookie('console_session')).toBeUndefined();
    expect((await browser.get('/console/overview')).headers.location).toBe('/console/sign-in?notice=session-ended');
    // Scripted requests get a status, not a redirect.
    expect((await browser.get('/console/read-models', { 'x-console-fragment': '1' })).status).toBe(401);
  });

  it('limits sign-in attempts per address: the eleventh in a minute is 429, other addresses unaffected', async () => {
    const guesser = new ConsoleClient(t, '10.9.9.9');
    for (let i = 0; i < 10; i++) expect((await guesser.signIn('operator', `guess-${i}`)).status).toBe(401);
    const limited = await guesser.signIn('operator', ADMIN_TOKEN);
    expect([limited.status, limited.text]).toEqual([429, expect.stringContaining('Too many sign-in attempts')]);
    expect((await new ConsoleClient(t, '10.9.9.10').signInAsOperator()).status).toBe(303);
  });

  it('refuses a state-changing form without the session’s CSRF token, changing nothing', async () => {
    const browser = new ConsoleClient(t, '10.0.0.3');
    await browser.signInAsOperator();
    const account = await t.accountWithKey();
    const missing = await browser.post(`/console/accounts/${account.accountId}/credits`, { amount: '5' });
    const forged = await browser.post(`/console/accounts/${account.accountId}/credits`, { amount: '5', _csrf: 'forged' });
    for (const res of [missing, forged]) expect([res.status, res.text]).toEqual([403, expect.stringContaining('CSRF')]);
    const page = await browser.get(`/console/accounts?q=${account.accountId}`);
    expect(page.text).toMatch(/data-credits>0</);
    const granted = await browser.post(`/console/accounts/${account.accountId}/credits`, { amount: '5', _csrf: ConsoleClient.csrfOf(page.text) });
    expect(granted.status).toBe(303);
    expect((await browser.get(`/console/accounts?q=${account.accountId}`)).text).toMatch(/data-credits>5</);
  });

  it('a creator opening an operator page gets 403; a key without the scope gets 403; an unknown page 404', async () => {
    const creator = await t.accountWithKey({ scopes: ['payouts:read'] });
    const browser = new ConsoleClient(t, '10.0.0.4');
    await browser.signIn('creator', creator.key);
    const operatorPage = await browser.get('/console/read-models');
    expect([operatorPage.status, operatorPage.text]).toEqual([403, expect.stringContaining('This page is for operators')]);
    expect((await browser.get('/console/nothing-here')).status).toBe(404);

    const narrow = await t.accountWithKey({ scopes: ['models:read'] });
    const other = new ConsoleClient(t, '10.0.0.5');
    await other.signIn('creator', narrow.key);
    const home = await other.get('/console/home');
    expect([home.status, home.text]).toEqual([403, expect.stringContaining('payouts:read')]);
  });

  it('ends a creator’s session at once when its key is revoked', async () => {
    const creator = await t.accountWithKey({ scopes: ['payouts:read'] });
    const browser = new ConsoleClient(t, '10.0.0.6');
    await browser.signIn('creator', creator.key);
    expect((await browser.get('/console/home')).status).toBe(200);
    expect((await t.admin('POST', `/admin/keys/${creator.keyId}/revoke`)).status).toBe(200);
    expect((await browser.get('/console/home')).headers.location).toBe('/console/sign-in?notice=session-ended');
  });

  it('signs out: the session is gone from the database, and the cookie no longer opens anything', async () => {
    const browser = new ConsoleClient(t, '10.0.0.7');
    await browser.signInAsOperator();
    const token = browser.cookie('console_session')!;
    const page = await browser.get('/console/overview');
    expect((await browser.post('/console/sign-out', { _csrf: ConsoleClient.csrfOf(page.text) })).headers.location).toBe('/console/sign-in?notice=signed-out');
    const replay = await t.app.getHttpAdapter().getInstance().inject({ method: 'GET', url: '/console/overview', headers: { cookie: `console_session=${token}` } });
    expect(replay.statusCode).toBe(303);
  });

  it('switches an operator between modes, the mode always shown', async () => {
    const browser = new ConsoleClient(t, '10.0.0.8');
    await browser.signInAsOperator('test');
    const page = await browser.get('/console/overview');
    expect((await browser.post('/console/mode', { mode: 'live', _csrf: ConsoleClient.csrfOf(page.text) })).status).toBe(303);
    expect((await browser.get('/console/overview')).text).toContain('data-mode="live"');
  });

  it('renders what users wrote as text: a listing titled with markup, a search for markup', async () => {
    const seller = await t.accountWithKey({ scopes: ['models:upload', 'payouts:read'] });
    await publishModel(t, seller.key, { title: '<img src=x onerror=alert(1)>' });
    const browser = new ConsoleClient(t, '10.0.0.9');
    await browser.signInAsOperator();
    const search = await browser.get(`/console/accounts?q=${encodeURIComponent('<script>alert(1)</script>')}`);
    expect(search.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(search.text).not.toContain('<script>alert(1)</script>');
  });
});
