import { ConsoleClient } from '../console/console-client';
import { startTestApp, TestApp } from '../support/app';
import { eventsOf, modelBody, modelBytes, publishModel, upload } from './catalog-client';

/**
 * Issue 40, the model card: `readme` (Markdown, at most 64 KiB of UTF-8) on publish and PATCH
 * of models, datasets and listings, returned as text on the object; the console's listing
 * page renders it sanitized, with the inspection summary beside it.
 */
const HOSTILE = [
  '# Grasp policy',
  '',
  'Works on **parallel** grippers. See [the paper](https://example.org/paper).',
  '',
  '<script>alert("card")</script>',
  '',
  '<img src="x" onerror="alert(1)">',
  '',
  '[click me](javascript:alert(document.cookie))',
  '',
  '[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
  '',
  '![pixel](https://example.org/p.png "t\\" onload=\\"alert(2)")',
].join('\n');

describe('readme: the model card', () => {
  let t: TestApp;
  let seller: { accountId: string; key: string };
  let reader: { accountId: string; key: string };

  beforeAll(async () => {
    t = await startTestApp();
    seller = await t.accountWithKey({ name: 'Card Lab' });
    reader = await t.accountWithKey({ scopes: ['models:read', 'datasets:read'] });
  });
  afterAll(() => t.close());

  it('is returned as text on the object from publish, GET and PATCH of a model, and recorded in its events', async () => {
    const model = await publishModel(t, seller.key, { title: 'Carded', readme: '# Carded\n\nHello.' });
    expect(model.readme).toBe('# Carded\n\nHello.');
    expect((await t.request('GET', `/v1/models/${model.id}`, { key: reader.key })).body.readme).toBe('# Carded\n\nHello.');
    const patched = await t.request('PATCH', `/v1/models/${model.id}`, { key: seller.key, body: { readme: 'Changed: café ☕' } });
    expect([patched.status, patched.body.readme]).toEqual([200, 'Changed: café ☕']);
    expect((await t.request('GET', `/v1/models/${model.id}`, { key: reader.key })).body.readme).toBe('Changed: café ☕');
    const drafted = (await eventsOf(t, 'ListingDrafted', seller.accountId)).find((e) => e.data.listing_id === model.id)!;
    expect(drafted.data.details.readme).toBe('# Carded\n\nHello.');
    const updated = (await eventsOf(t, 'ListingUpdated', seller.accountId)).filter((e) => e.data.listing_id === model.id);
    expect(updated.map((e) => e.data.changes)).toEqual([{ readme: 'Changed: café ☕' }]);
  });

  it('is null on a listing without one, and set by PATCH of datasets and listings', async () => {
    const dataset = await t.request('POST', '/v1/datasets', { key: seller.key, body: { title: 'Carded runs' } });
    expect([dataset.status, dataset.body.readme]).toEqual([201, null]);
    const patched = await t.request('PATCH', `/v1/datasets/${dataset.body.id}`, { key: seller.key, body: { readme: 'Recorded on a UR5.' } });
    expect(patched.body.readme).toBe('Recorded on a UR5.');
    const draft = await t.request('POST', '/v1/listings', { key: seller.key, body: { title: 'Carded draft', readme: 'Draft card.' } });
    expect([draft.status, draft.body.readme]).toEqual([201, 'Draft card.']);
    const viaListings = await t.request('PATCH', `/v1/listings/${draft.body.id}`, { key: seller.key, body: { readme: 'Second card.' } });
    expect(viaListings.body.readme).toBe('Second card.');
    expect((await t.request('GET', `/v1/listings/${draft.body.id}`, { key: seller.key })).body.readme).toBe('Second card.');
  });

  it('takes exactly 64 KiB of UTF-8, and refuses one byte more with a 400 naming readme, recording nothing', async () => {
    const limit = 64 * 1024;
    const grant = await upload(t, seller.key, 'policy.onnx', modelBytes('card-limit'));
    const at = await t.request('POST', '/v1/models', { key: seller.key, body: modelBody(grant, { title: 'At the limit', readme: 'a'.repeat(limit) }) });
    expect([at.status, at.body.readme.length]).toEqual([201, limit]);

    const before = (await eventsOf(t, 'ListingDrafted', seller.accountId)).length;
    const over = await t.request('POST', '/v1/models', { key: seller.key, body: modelBody(grant, { title: 'Over the limit', readme: 'a'.repeat(limit + 1) }) });
    expect([over.status, over.body.error.code, over.body.error.errors?.[0]?.field]).toEqual([400, 'validation_failed', 'readme']);
    expect(over.body.error.message).toBe(`Invalid field "readme": at most ${limit} bytes (64 KiB) of UTF-8 Markdown; got ${limit + 1}.`);
    // Counted in bytes: 33,000 two-byte characters are fewer than 65,536 characters but 66,000 bytes.
    const wide = await t.request('PATCH', `/v1/models/${at.body.id}`, { key: seller.key, body: { readme: 'é'.repeat(33_000) } });
    expect([wide.status, wide.body.error.errors?.[0]?.field]).toEqual([400, 'readme']);
    expect(wide.body.error.message).toContain('got 66000');
    expect(await t.request('POST', '/v1/datasets', { key: seller.key, body: { title: 'Big card', readme: 'b'.repeat(limit + 1) } })).toMatchObject({ status: 400 });
    const notText = await t.request('PATCH', `/v1/listings/${at.body.id}`, { key: seller.key, body: { readme: 42 } });
    expect([notText.status, notText.body.error.errors?.[0]?.field]).toEqual([400, 'readme']);
    // Nothing recorded by the refusals: no new listing, the card as it was.
    expect((await eventsOf(t, 'ListingDrafted', seller.accountId)).length).toBe(before);
    expect((await t.request('GET', `/v1/models/${at.body.id}`, { key: reader.key })).body.readme).toBe('a'.repeat(limit));
  });

  it('renders on the console listing page sanitized: no script, no inline handler, no javascript: link; links noopener nofollow; inspection beside it', async () => {
    const model = await publishModel(t, seller.key, { title: 'Hostile card', readme: HOSTILE });
    expect(model.readme).toBe(HOSTILE);
    const browser = new ConsoleClient(t, '10.4.0.1');
    expect((await browser.signIn('creator', seller.key)).status).toBe(303);
    const page = await browser.get(`/console/listings/${model.id}`);
    expect(page.status).toBe(200);
    const readme = /<article class="panel readme" data-readme[^>]*>([\s\S]*?)<\/article>/.exec(page.text)?.[1];
    expect(readme).toBeDefined();
    // The Markdown is rendered...
    expect(readme).toContain('<h1>Grasp policy</h1>');
    expect(readme).toContain('<strong>parallel</strong>');
    expect(readme).toContain('<a href="https://example.org/paper" rel="noopener nofollow noreferrer" target="_blank">the paper</a>');
    // ...and what was hostile in it is text, not markup.
    expect(readme).toContain('&lt;script&gt;alert(&quot;card&quot;)&lt;/script&gt;');
    expect(readme).toContain('&lt;img src=&quot;x&quot; onerror=&quot;alert(1)&quot;&gt;');
    // Every tag of the card, with its attributes (values double-quoted, quotes inside escaped): only
    // markdown-it's own elements, no on* attribute, no script URL. Every "<" starts one of them.
    const tags = [...readme!.matchAll(/<(\/?)([a-z0-9]+)((?:\s+[a-z-]+="[^"]*")*)\s*>/g)];
    expect(tags.length).toBe((readme!.match(/</g) ?? []).length);
    for (const [, , name, attributes] of tags) {
      expect(['h1', 'p', 'strong', 'a', 'img']).toContain(name);
      for (const [, attribute, value] of attributes.matchAll(/([a-z-]+)="([^"]*)"/g)) {
        expect(['href', 'rel', 'target', 'src', 'alt', 'title']).toContain(attribute);
        if (attribute === 'href' || attribute === 'src') expect(value).toMatch(/^https:\/\//);
      }
    }
    expect(readme).toContain('[click me](javascript:alert(document.cookie))');
    // Every link the card makes carries rel="noopener nofollow".
    const links = readme!.match(/<a [^>]*>/g) ?? [];
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) expect(link).toMatch(/rel="noopener nofollow noreferrer"/);
    // The image stays an image, its hostile title an attribute value (quotes escaped).
    expect(readme).toMatch(/<img src="https:\/\/example.org\/p.png" alt="pixel" title="t&quot; onload=&quot;alert\(2\)">/);
    // What inspection found, beside the card.
    const aside = /<aside class="panel" data-inspection[^>]*>([\s\S]*?)<\/aside>/.exec(page.text)?.[1];
    expect(aside).toContain('<th scope="row">format</th><td>onnx</td>');
    expect(aside).toContain('<td>obs</td>');

    // The listings table links to the page; another creator gets 404 for it.
    expect((await browser.get('/console/listings')).text).toContain(`href="/console/listings/${model.id}"`);
    const other = await t.accountWithKey({ scopes: ['listings:read'] });
    const stranger = new ConsoleClient(t, '10.4.0.2');
    await stranger.signIn('creator', other.key);
    expect((await stranger.get(`/console/listings/${model.id}`)).status).toBe(404);
  });
});
