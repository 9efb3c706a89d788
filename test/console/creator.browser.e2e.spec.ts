import { publishModel, upload, modelBody } from '../catalog/catalog-client';
import { buy, DISPUTED } from '../commerce/commerce-client';
import { ask, openaiFor, usageOf } from '../inference/inference-client';
import { ledgerDriver } from '../ledger/support';
import { startTestApp, TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { ENCRYPTION_KEY } from '../webhooks/helpers';
import { startReceiver } from '../webhooks/receiver';
import { chartData, charts, ConsoleBrowser, consoleBrowser, sidewaysAt, textOf } from './browser';
import { ConsoleClient } from './console-client';

/**
 * Issue 26, the creator's pages: payouts, listings, inference usage and webhooks, each from
 * the data this test made through the API, in a real browser (charts drawn, axe-core, no
 * console error, screenshots), and over HTTP: a key without the page's scope gets 403,
 * another account's data never shows, and a key sees its own mode only.
 */
const CREATOR_SCOPES = ['models:upload', 'listings:read', 'listings:write', 'payouts:read', 'webhooks:write'];

describe('the creator’s console pages (issue 26)', () => {
  let t: TestApp;
  let b: ConsoleBrowser;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let seller: { accountId: string; key: string };
  let other: { accountId: string; key: string };
  let liveKey: string;
  const made = {} as {
    grasp: { id: string };
    nav: { id: string };
    draftId: string;
    payoutId: string;
    endpointId: string;
    otherPayoutId: string;
    otherEndpointId: string;
    livePayoutId: string;
    liveEndpointId: string;
  };

  /** Another key of the same account (the console signs in with one key, the work is done with others). */
  const keyFor = async (accountId: string, options: { mode?: 'test' | 'live'; tier?: 'free' | 'premium'; scopes: string[] }) => {
    const res = await t.admin('POST', '/admin/keys', { account: accountId, mode: options.mode ?? 'test', tier: options.tier ?? 'free', scopes: options.scopes });
    if (res.status !== 201) throw new Error(`key create failed: ${res.text}`);
    return res.body.key as string;
  };
  const createEndpoint = async (key: string, url: string, events: string[], description = '') => {
    const res = await t.request('POST', '/v1/webhook_endpoints', { key, body: { url, events, description } });
    if (res.status !== 201 && res.status !== 200) throw new Error(`endpoint create failed: ${res.text}`);
    return res.body as { id: string; secret: string };
  };
  const download = async (key: string, id: string) => {
    const res = await t.request('POST', `/v1/models/${id}/download`, { key });
    if (res.status !== 200) throw new Error(`download failed: ${res.text}`);
  };
  const runPayout = async (accountId: string, mode: 'test' | 'live') => {
    const res = await t.admin('POST', '/admin/payouts/run', { mode, account: accountId });
    if (res.status !== 200 || res.body.items.length !== 1) throw new Error(`payout run failed: ${res.text}`);
    return res.body.items[0].id as string;
  };
  const sales = (key: string, n: number) =>
    eventually(async () => (await t.request('GET', '/v1/balance_transactions?type=sale', { key })).body.items.length === n, 20_000, `${n} sales on the ledger`);

  beforeAll(async () => {
    t = await startTestApp({ env: { WEBHOOK_ENCRYPTION_KEY: ENCRYPTION_KEY, WEBHOOK_RETRY_SCHEDULE: '0,1,1', WEBHOOK_TIMEOUT_MS: '5000' } });
    b = await consoleBrowser(t);
    // The payouts' webhooks fail (500, three attempts); the purchases' arrive.
    receiver = await startReceiver((r) => (JSON.parse(r.body).type === 'payout.paid' ? 500 : 204));

    seller = await t.accountWithKey({ scopes: CREATOR_SCOPES, name: 'Acme Robotics' });
    other = await t.accountWithKey({ scopes: CREATOR_SCOPES, name: 'Other Robotics' });
    const buyers = [await t.accountWithKey({ scopes: ['models:read'] }), await t.accountWithKey({ scopes: ['models:read'] })];

    made.endpointId = (await createEndpoint(seller.key, receiver.url, ['listing.purchased', 'payout.paid'], 'Acme shop backend')).id;
    made.grasp = await publishModel(t, seller.key, { title: 'Grasp policy', price_cents: 2500 });
    made.nav = await publishModel(t, seller.key, { title: 'Nav stack', price_cents: 4000 });
    // A draft whose publish failed: its file was never uploaded.
    const grant = await t.request('POST', '/v1/uploads', { key: seller.key, body: { file_name: 'late.onnx', file_size: 10 } });
    made.draftId = (await t.request('POST', '/v1/listings', { key: seller.key, body: modelBody(grant.body, { title: 'Late upload', price_cents: 1500 }) })).body.id;
    expect((await t.request('POST', `/v1/listings/${made.draftId}/publish`, { key: seller.key })).status).toBe(400);

    // Three sales, then a payout of them; a fourth sale after it waits for the next payout.
    await buy(t, buyers[0].key, made.grasp.id);
    await buy(t, buyers[1].key, made.grasp.id);
    await buy(t, buyers[0].key, made.nav.id);
    await download(buyers[0].key, made.grasp.id);
    await download(buyers[1].key, made.grasp.id);
    await download(buyers[0].key, made.nav.id);
    await sales(seller.key, 3);
    made.payoutId = await runPayout(seller.accountId, 'test');
    await buy(t, buyers[1].key, made.nav.id);
    await sales(seller.key, 4);

    // Inference with a premium key of the same account: three calls of one model, two of another.
    const premium = await keyFor(seller.accountId, { tier: 'premium', scopes: ['inference:run'] });
    for (let i = 0; i < 3; i++) await openaiFor(t, premium).chat.completions.create(ask(`hello ${i}`));
    for (let i = 0; i < 2; i++) await openaiFor(t, premium).chat.completions.create(ask(`think ${i}`, { model: 'svc-reason-70b' }));

    // Another creator with data of every kind, which the seller must never see.
    made.otherEndpointId = (await createEndpoint(other.key, `${receiver.url}?other-seller`, ['listing.purchased'], 'Other seller hook')).id;
    const theirs = await publishModel(t, other.key, { title: 'Other seller model', price_cents: 9900 });
    await buy(t, buyers[0].key, theirs.id);
    await sales(other.key, 1);
    made.otherPayoutId = await runPayout(other.accountId, 'test');
    const otherPremium = await keyFor(other.accountId, { tier: 'premium', scopes: ['inference:run'] });
    await openaiFor(t, otherPremium).chat.completions.create(ask('other', { model: 'svc-reason-70b' }));

    // The seller's live mode: its own endpoint, listing, sale and payout.
    liveKey = await keyFor(seller.accountId, { mode: 'live', scopes: CREATOR_SCOPES });
    made.liveEndpointId = (await createEndpoint(liveKey, 'https://1.1.1.1/live-hook', ['factory.job.published'], 'Live hook')).id;
    await publishModel(t, liveKey, { title: 'Live only model', price_cents: 0 });
    await ledgerDriver(t).sale(seller.accountId, 'live', { amount_cents: 7000 });
    made.livePayoutId = await runPayout(seller.accountId, 'live');

    // Everything the pages show has reached its read model.
    await eventually(async () => (await t.request('GET', `/v1/listings/${made.grasp.id}`, { key: seller.key })).body.downloads === 2, 20_000, 'the downloads to be counted');
    await eventually(async () => {
      const log = (await t.request('GET', `/v1/webhook_endpoints/${made.endpointId}/events`, { key: seller.key })).body.items as { status: string }[];
      return log.length === 5 && log.every((d) => d.status !== 'pending');
    }, 30_000, 'the deliveries to settle');
  }, 180_000);
  afterAll(async () => {
    await b?.close();
    await t?.close();
    await receiver?.close();
  });

  it('balance: each day of the per-day table adds up, a day with a dispute too', async () => {
    const disputed = await t.accountWithKey({ scopes: CREATOR_SCOPES, name: 'Disputed Robotics' });
    const buyer = await t.accountWithKey({ scopes: ['models:read'] });
    await buy(t, buyer.key, (await publishModel(t, disputed.key, { title: 'Kept policy', price_cents: 3000 })).id);
    await buy(t, buyer.key, (await publishModel(t, disputed.key, { title: 'Disputed policy', price_cents: 2599 })).id, DISPUTED);
    await eventually(async () => (await t.request('GET', '/v1/balance_transactions?type=dispute', { key: disputed.key })).body.items.length === 1, 20_000, 'the dispute on the ledger');
    const { page, errors } = await b.open();
    await b.signIn(page, 'creator', disputed.key);
    await b.visit(page, errors, '/console/home', 'balance-with-dispute');
    const table = await page.$$eval('table.panel', (tables) => {
      const perDay = tables.find((t) => t.querySelector('caption')?.textContent === 'Per day')!;
      const heads = [...perDay.querySelectorAll('thead th')].map((th) => th.textContent);
      const cents = (text: string) => Math.round(Number(text.replace(/[$,]/g, '')) * 100);
      return { heads, rows: [...perDay.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')].slice(1).map((td) => cents(td.textContent!))) };
    });
    expect(table.heads).toEqual(['Day', 'Opening', 'Sales', 'Fees', 'Refunds', 'Payouts', 'Disputes', 'Adjustments', 'Closing']);
    for (const [opening, ...rest] of table.rows) {
      const closing = rest.pop()!;
      expect(opening + rest.reduce((sum, n) => sum + n, 0)).toBe(closing);
    }
    // Today (the first row): both sales, and the disputed one's net withheld in the disputes column.
    const [today] = table.rows;
    expect(today[1]).toBe(5599);
    expect(today[5]).toBeLessThan(0);
  });

  it('payouts: each with its status and amount, linked to the balance transactions it paid out', async () => {
    const { page, errors } = await b.open();
    await b.signIn(page, 'creator', seller.key);
    await b.visit(page, errors, '/console/payouts', 'payouts');
    const rows = await page.$$eval('tr[data-payout]', (trs) => trs.map((tr) => [tr.getAttribute('data-payout'), ...[...tr.querySelectorAll('td')].map((td) => td.textContent!.trim())]));
    // 2500 + 2500 + 4000 less the platform's 15%.
    expect(rows).toEqual([[made.payoutId, expect.any(String), made.payoutId, 'paid', '$76.50', expect.stringMatching(/^\d{4}-/), 'Balance transactions']]);
    // The fourth sale, after the payout, is what is owed now.
    expect(await page.$eval('[data-owed]', (el) => el.textContent)).toBe('$34.00');

    await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click(`tr[data-payout="${made.payoutId}"] a`)]);
    expect(page.url()).toBe(`${b.base}/console/transactions?payout=${made.payoutId}`);
    expect(await page.$eval('table[data-rows]', (el) => Number(el.getAttribute('data-rows')))).toBe(3);
    expect(await page.$$eval('table[data-rows] tbody tr td:nth-child(2)', (tds) => tds.map((td) => td.textContent))).toEqual(['sale', 'sale', 'sale']);
    await b.visit(page, errors, `/console/transactions?payout=${made.payoutId}`, 'transactions-of-payout');
    const csv = await page.evaluate(async (id) => (await fetch(`/console/transactions?payout=${id}&format=csv`)).text(), made.payoutId);
    expect(csv.trim().split('\r\n')).toHaveLength(4);
    // All of them: the four sales and the payout.
    await b.visit(page, errors, '/console/transactions', 'transactions');
    expect(await page.$eval('table[data-rows]', (el) => Number(el.getAttribute('data-rows')))).toBe(5);
    const tabStop = () => page.$eval('table[data-rows]', (el) => el.getAttribute('tabindex'));
    expect(await tabStop()).toBeNull(); // it fits: not one more tab stop

    // On a phone's width the page does not scroll sideways: the wide table scrolls in its own box.
    await page.setViewport({ width: 390, height: 844 });
    await b.visit(page, errors, '/console/transactions', 'transactions-narrow');
    const widths = (await page.evaluate(
      `(() => { const table = document.querySelector('table[data-rows]'); return { page: document.documentElement.scrollWidth, window: window.innerWidth, table: table.scrollWidth, box: table.clientWidth }; })()`,
    )) as { page: number; window: number; table: number; box: number };
    expect(widths.page).toBe(widths.window);
    expect(widths.table).toBeGreaterThan(widths.box);
    // It scrolls, so the keyboard can reach it to scroll it; wide again, it is no stop.
    expect(await tabStop()).toBe('0');
    await page.setViewport({ width: 1280, height: 800 });
    await page.waitForFunction(`document.querySelector('table[data-rows]').getAttribute('tabindex') === null`, { timeout: 5000 });
  });

  it('listings: drafts and published, with validation, price, downloads and sales', async () => {
    const { page, errors } = await b.open();
    await b.signIn(page, 'creator', seller.key);
    await b.visit(page, errors, '/console/listings', 'listings');
    const row = (id: string) =>
      page.$eval(`tr[data-listing="${id}"]`, (tr) => ({
        text: tr.textContent!,
        downloads: tr.querySelector('[data-downloads]')!.textContent,
        sales: tr.querySelector('[data-sales]')!.getAttribute('data-sales'),
        validation: tr.querySelector('[data-validation]')!.textContent,
      }));
    expect(await page.$$eval('tr[data-listing]', (trs) => trs.length)).toBe(3);
    expect(await row(made.grasp.id)).toEqual({ text: expect.stringContaining('Grasp policy'), downloads: '2', sales: '2', validation: 'passed' });
    expect(await row(made.nav.id)).toEqual({ text: expect.stringContaining('$40.00'), downloads: '1', sales: '2', validation: 'passed' });
    const draft = await row(made.draftId);
    expect(draft).toEqual({ text: expect.stringContaining('draft'), downloads: '0', sales: '0', validation: expect.stringContaining('failed') });
    expect(draft.validation).toContain('file_not_found');

    await b.visit(page, errors, '/console/listings?status=draft', 'listings-drafts');
    expect(await page.$$eval('tr[data-listing]', (trs) => trs.map((tr) => tr.getAttribute('data-listing')))).toEqual([made.draftId]);
  });

  it('a listing page: its model card rendered, a hostile part inert, and what inspection found beside it (issue 40)', async () => {
    const card = '# Grasp policy\n\nTrained on *10k* grasps. [Paper](https://example.org/paper)\n\n<img src=x onerror="window.__pwned = 1">\n\n[x](javascript:window.__pwned=2)';
    expect((await t.request('PATCH', `/v1/models/${made.grasp.id}`, { key: seller.key, body: { readme: card } })).status).toBe(200);
    const { page, errors } = await b.open();
    await b.signIn(page, 'creator', seller.key);
    await b.visit(page, errors, `/console/listings/${made.grasp.id}`, 'listing-page');
    expect(await page.$eval('[data-readme] h1', (h) => h.textContent)).toBe('Grasp policy');
    expect(await page.$eval('[data-readme] a', (a) => [a.getAttribute('href'), a.getAttribute('rel')])).toEqual(['https://example.org/paper', 'noopener nofollow noreferrer']);
    expect(await page.$$eval('[data-readme] img, [data-readme] script', (found) => found.length)).toBe(0);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    expect(await page.$eval('[data-inspection]', (aside) => aside.textContent)).toContain('onnx');
  });

  it('listings: a creator with none yet reads how to publish one, not an empty table', async () => {
    const newcomer = await t.accountWithKey({ scopes: ['listings:read'] });
    const browser = new ConsoleClient(t, '10.1.0.7');
    await browser.signIn('creator', newcomer.key);
    const empty = await browser.get('/console/listings');
    expect(empty.status).toBe(200);
    expect(empty.text).toContain('No listing yet: publish a model through the API or <code>svc models publish</code>.');
    expect(empty.text).not.toContain('<table');
    expect(empty.text).not.toContain('`');
    // The seller's drafts filtered to a status they have none of.
    const browsing = new ConsoleClient(t, '10.1.0.8');
    await browsing.signIn('creator', await keyFor(seller.accountId, { scopes: ['listings:read'] }));
    const unpublished = await browsing.get('/console/listings?status=unpublished');
    expect([unpublished.status, unpublished.text]).toEqual([200, expect.stringContaining('No unpublished listing.')]);
    expect(unpublished.text).not.toContain('<table');
  });

  it('inference usage: calls per day and model drawn from the same rows as GET /v1/usage, today’s equal to the calls made', async () => {
    const { page, errors } = await b.open();
    await b.signIn(page, 'creator', seller.key);
    await b.visit(page, errors, '/console/usage', 'usage');
    expect(await charts(page)).toEqual([{ points: 30, painted: true }]);
    const { series } = await chartData(page, 0);
    expect(series.map((s) => [s.label, s.values.at(-1), s.values.reduce((n, v) => n! + v!, 0)])).toEqual([
      ['svc-fast-8b', 3, 3],
      ['svc-reason-70b', 2, 2],
    ]);
    expect(await page.$eval('[data-usage="calls"]', (el) => el.textContent)).toBe('5');
    const api = await usageOf(t, seller.key);
    expect(api.summary.calls).toBe(5);
    expect(await page.$eval('[data-usage="cost"]', (el) => el.textContent)).toBe(`$${api.summary.cost_usd.toFixed(6)}`);
    expect(await page.$$eval('tr[data-model]', (trs) => trs.map((tr) => tr.getAttribute('data-model')))).toEqual(api.by_model.map((m: any) => m.model));
  });

  it('webhooks: the endpoint without its secret, its deliveries with status and attempts', async () => {
    const { page, errors } = await b.open();
    await b.signIn(page, 'creator', seller.key);
    await b.visit(page, errors, '/console/my-webhooks', 'my-webhooks');
    expect(await sidewaysAt(page, 390, 'my-webhooks-390')).toBe(0);
    expect(await page.$$eval('tr[data-endpoint]', (trs) => trs.map((tr) => tr.getAttribute('data-endpoint')))).toEqual([made.endpointId]);
    const deliveries = await page.$$eval('tr[data-delivery]', (trs) =>
      trs.map((tr) => [tr.querySelector('td:nth-child(2)')!.firstChild!.textContent, tr.querySelector('.badge')!.textContent, tr.querySelector('[data-attempts]')!.textContent]),
    );
    // Four purchases delivered at once; the payout refused three times.
    expect(deliveries.filter(([type]) => type === 'listing.purchased')).toEqual(Array(4).fill(['listing.purchased', 'succeeded', '1']));
    expect(deliveries.filter(([type]) => type === 'payout.paid')).toEqual([['payout.paid', 'failed', '3']]);
    const text = await textOf(page);
    expect(text).toContain('Acme shop backend');
    expect(text).not.toMatch(/whsec_/);
    expect(errors).toEqual([]);
  });

  it('a key without the scope a page needs gets a 403 page; usage needs none, as GET /v1/usage', async () => {
    const narrow = await keyFor(seller.accountId, { scopes: ['models:read'] });
    const browser = new ConsoleClient(t, '10.1.0.1');
    expect((await browser.signIn('creator', narrow)).status).toBe(303);
    for (const [url, scope] of [
      ['/console/payouts', 'payouts:read'],
      [`/console/transactions?payout=${made.payoutId}`, 'payouts:read'],
      ['/console/listings', 'listings:read'],
      ['/console/my-webhooks', 'webhooks:write'],
    ]) {
      const res = await browser.get(url);
      expect([url, res.status, res.text]).toEqual([url, 403, expect.stringContaining(scope)]);
    }
    const usage = await browser.get('/console/usage');
    expect([usage.status, usage.text]).toEqual([200, expect.stringContaining('data-usage="calls">5<')]);
    // Signed in, the key lands on a page it can open (not the balance, which needs payouts:read) ...
    expect((await browser.get('/console')).headers.location).toBe('/console/usage');
    // ... and a refused page keeps the bar (only the sections the key opens) and sign-out; its way back is that landing page.
    const refused = await browser.get('/console/payouts');
    const sections = [...refused.text.matchAll(/<nav class="main"[^>]*>([\s\S]*?)<\/nav>/g)][0][1].match(/href="[^"]+"/g);
    expect(sections).toEqual(['href="/console/usage"']);
    expect(refused.text).toContain('action="/console/sign-out"');
    expect(refused.text).toContain('<a href="/console">Back to the console</a>');

    // Each scope opens its own page only.
    const webhooksOnly = new ConsoleClient(t, '10.1.0.2');
    await webhooksOnly.signIn('creator', await keyFor(seller.accountId, { scopes: ['webhooks:write'] }));
    expect((await webhooksOnly.get('/console/my-webhooks')).status).toBe(200);
    expect((await webhooksOnly.get('/console/listings')).status).toBe(403);
  });

  it('another account’s data never shows, and its payout or endpoint by id is a 404 page', async () => {
    const browser = new ConsoleClient(t, '10.1.0.3');
    await browser.signIn('creator', seller.key);
    const pages = await Promise.all(['/console/payouts', '/console/listings', '/console/usage', '/console/my-webhooks', '/console/transactions'].map((url) => browser.get(url)));
    for (const res of pages) {
      expect(res.status).toBe(200);
      for (const theirs of [made.otherPayoutId, made.otherEndpointId, 'Other seller model', 'Other seller hook', 'other-seller']) expect(res.text).not.toContain(theirs);
    }
    // Their one svc-reason-70b call is not in the seller's two.
    expect(pages[2].text).toContain('data-usage="calls">5<');
    for (const url of [`/console/transactions?payout=${made.otherPayoutId}`, `/console/transactions?payout=${made.otherPayoutId}&format=csv`, `/console/my-webhooks?endpoint=${made.otherEndpointId}`]) {
      const res = await browser.get(url);
      expect([url, res.status]).toEqual([url, 404]);
      expect(res.text).not.toContain('Other seller');
    }
    // And they see theirs, not the seller's.
    const theirs = new ConsoleClient(t, '10.1.0.4');
    await theirs.signIn('creator', other.key);
    const listings = await theirs.get('/console/listings');
    expect(listings.text).toContain('Other seller model');
    expect(listings.text).not.toContain('Grasp policy');
  });

  it('a live key sees live data only, and a test key none of it', async () => {
    const live = new ConsoleClient(t, '10.1.0.5');
    await live.signIn('creator', liveKey);
    const payouts = await live.get('/console/payouts');
    expect(payouts.text).toContain('data-mode="live"');
    expect(payouts.text).toContain(made.livePayoutId);
    expect(payouts.text).toContain('$59.50');
    expect(payouts.text).not.toContain(made.payoutId);
    const listings = await live.get('/console/listings');
    expect(listings.text).toContain('Live only model');
    expect(listings.text).not.toContain('Grasp policy');
    expect(listings.text).toMatch(/data-rows="1"/);
    const webhooks = await live.get('/console/my-webhooks');
    expect(webhooks.text).toContain(made.liveEndpointId);
    expect(webhooks.text).not.toContain(made.endpointId);
    expect((await live.get('/console/usage')).text).toContain('data-usage="calls">0<');
    // The test payout's transactions are not on the live ledger.
    expect((await live.get(`/console/transactions?payout=${made.payoutId}`)).status).toBe(404);

    const test = new ConsoleClient(t, '10.1.0.6');
    await test.signIn('creator', seller.key);
    for (const url of ['/console/payouts', '/console/listings', '/console/my-webhooks']) {
      const res = await test.get(url);
      for (const liveOnly of [made.livePayoutId, 'Live only model', made.liveEndpointId]) expect(res.text).not.toContain(liveOnly);
    }
  });
});

describe('the operator’s "open by id" box (issue 43)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ env: { WEBHOOK_ENCRYPTION_KEY: ENCRYPTION_KEY } });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it('opens an account, key, event, purchase, payout and delivery by its id; another mode’s, an unknown id and a creator are refused', async () => {
    const receiver = await startReceiver(() => 204);
    try {
      const seller = await t.accountWithKey({ scopes: CREATOR_SCOPES, name: 'Findable Robotics' });
      const buyer = await t.accountWithKey({ scopes: ['models:read'] });
      const endpoint = await t.request('POST', '/v1/webhook_endpoints', { key: seller.key, body: { url: receiver.url, events: ['listing.purchased'] } });
      const session = await buy(t, buyer.key, (await publishModel(t, seller.key, { title: 'Findable policy', price_cents: 1000 })).id);
      const purchase = await eventually(async () => (await t.request('GET', '/v1/purchases', { key: buyer.key })).body.items?.[0], 20_000, 'the purchase');
      const payout = await eventually(async () => {
        const res = await t.admin('POST', '/admin/payouts/run', { mode: 'test', account: seller.accountId });
        return res.body.items?.[0];
      }, 20_000, 'a payout');
      const delivery = await eventually(async () => (await t.request('GET', `/v1/webhook_endpoints/${endpoint.body.id}/events`, { key: seller.key })).body.items?.[0], 20_000, 'a delivery');
      const event = (await t.request('GET', '/v1/events', { key: seller.key })).body.items[0];
      const keyId = (await t.request('GET', '/v1/me', { key: seller.key })).body.key.id;

      const operator = new ConsoleClient(t, '10.2.0.1');
      await operator.signInAsOperator();
      const open = async (id: string) => {
        const res = await operator.get(`/console/find?id=${encodeURIComponent(id)}`);
        return res.status === 303 ? res.headers.location : res.status;
      };
      expect(session.id).toBeTruthy();
      expect(await open(seller.accountId)).toBe(`/console/accounts?q=${seller.accountId}`);
      expect(await open(keyId)).toBe(`/console/accounts?q=${seller.accountId}`);
      expect(await open(event.id)).toBe(`/console/events/${event.id}`);
      expect(await open(purchase.id)).toBe(`/console/streams/${encodeURIComponent(`checkout-test-${session.id}`)}`);
      expect(await open(payout.id)).toBe(`/console/streams/${encodeURIComponent(`ledger-test-${seller.accountId}`)}`);
      expect(await open(delivery.id)).toBe(`/console/webhooks/deliveries/${delivery.id}`);
      // Each target opens.
      for (const id of [seller.accountId, purchase.id, payout.id, delivery.id]) expect((await operator.get(String(await open(id)))).status).toBe(200);
      // The live operator does not find test objects; an unknown prefix is a clear 400; an unknown id 404.
      const live = new ConsoleClient(t, '10.2.0.2');
      await live.signInAsOperator('live');
      expect((await live.get(`/console/find?id=${purchase.id}`)).status).toBe(404);
      const odd = await operator.get('/console/find?id=ord_123');
      expect([odd.status, odd.text]).toEqual([400, expect.stringContaining('not an id the console opens')]);
      expect(await open('pur_doesnotexist')).toBe(404);
      // The box is in every operator page's bar, never in a creator's; a creator cannot use it.
      expect((await operator.get('/console/overview')).text).toContain('action="/console/find"');
      const creator = new ConsoleClient(t, '10.2.0.3');
      await creator.signIn('creator', seller.key);
      expect((await creator.get('/console/usage')).text).not.toContain('action="/console/find"');
      expect((await creator.get(`/console/find?id=${purchase.id}`)).status).toBe(403);
    } finally {
      await receiver.close();
    }
  }, 120_000);
});
