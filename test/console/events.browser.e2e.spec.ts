import { randomUUID } from 'node:crypto';
import { EVENT_STORE, EventStore } from '../../src/event-store/event-store';
import { JournalQueries } from '../../src/ledger/journal-queries';
import { Streams } from '../../src/platform/streams';
import { publishModel } from '../catalog/catalog-client';
import { buy } from '../commerce/commerce-client';
import { ADMIN_TOKEN, startTestApp, TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { ConsoleBrowser, consoleBrowser, textOf } from './browser';
import { ConsoleClient } from './console-client';

/**
 * Issue 26, the event log: the global log newest first with type and time filters, a stream,
 * one event with its data as escaped text, and the follow from a purchase to its sale, its
 * postings and its webhook deliveries. Runs on PGlite, the Postgres server and the
 * EventStoreDB stand-in (TEST_EVENTSTORE=standin): everything goes through the port.
 */
const HOSTILE = '</script><img src=x onerror=alert(1)>';

describe('the console: event log (issue 26)', () => {
  let t: TestApp;
  let b: ConsoleBrowser;
  let store: EventStore;
  let seller: { accountId: string; key: string };
  let hostile: { id: string; stream: string };

  beforeAll(async () => {
    t = await startTestApp();
    b = await consoleBrowser(t);
    store = t.app.get<EventStore>(EVENT_STORE);
    seller = await t.accountWithKey({ scopes: ['models:upload', 'payouts:read'], name: 'Event Log Robotics' });
    const buyer = await t.accountWithKey({ scopes: ['models:read'] });
    const model = await publishModel(t, seller.key, { title: 'Arm controller', price_cents: 1900 });
    await buy(t, buyer.key, model.id);
    // The sale reaches the journal through the fulfilment subscriber and the journal projection.
    const journal = t.app.get(JournalQueries);
    await eventually(async () => (await journal.postings('test', {}, { limit: 100 })).items.some((p) => p.event_type === 'SaleRecorded'), 20_000, 'the sale in the journal');
    // An event whose data holds markup, on a stream of a category the service reads.
    hostile = { id: randomUUID(), stream: Streams.webhookEndpoint('test', `console-${randomUUID()}`) };
    await store.append(hostile.stream, [{ id: hostile.id, type: 'ConsoleHostileTest', data: { mode: 'test', note: HOSTILE }, metadata: { by: HOSTILE } }], 'no_stream');
  }, 120_000);
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it('shows the log newest first, filters it by type, and follows a purchase to its sale, postings and deliveries', async () => {
    const { page, errors } = await b.open();
    await b.signIn(page, 'operator', ADMIN_TOKEN);
    await b.visit(page, errors, '/console/events', 'events');
    const rows = await page.$$eval('tr[data-event]', (trs) => trs.map((tr) => tr.getAttribute('data-event')));
    // The newest event is the one appended last.
    expect(rows[0]).toBe(hostile.id);

    await b.visit(page, errors, '/console/events?type=PurchaseCompleted', 'events-filtered');
    const types = await page.$$eval('tr[data-event] td:nth-child(2)', (tds) => tds.map((td) => td.textContent));
    expect(types).toEqual(['PurchaseCompleted']);

    // A time range that ends before anything happened: the window says so and offers no more.
    await b.visit(page, errors, '/console/events?type=PurchaseCompleted&to=2000-01-01T00:00:00', 'events-empty-window');
    expect(await page.$('[data-window-empty]')).not.toBeNull();

    // The purchase's event: its sale, its postings and its deliveries, one click away.
    await page.goto(`${b.base}/console/events?type=PurchaseCompleted`, { waitUntil: 'load' });
    await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('tr[data-event] td:last-child a')]);
    expect(page.url()).toContain('/console/events/');
    await b.visit(page, errors, new URL(page.url()).pathname + new URL(page.url()).search, 'event-purchase');
    expect(await page.$eval('[data-json="data"]', (el) => el.textContent)).toContain('"purchase_id"');
    expect(Number(await page.$eval('[data-postings]', (el) => el.getAttribute('data-postings')))).toBeGreaterThan(0);
    await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('a[data-follow="sale"]')]);
    expect(await page.$eval('dl[data-event] dd', (el) => el.textContent)).toBe('SaleRecorded');
    expect(errors).toEqual([]);

    // The stream it belongs to, in revision order.
    const stream = Streams.ledger('test', seller.accountId);
    await b.visit(page, errors, `/console/streams/${encodeURIComponent(stream)}`, 'stream');
    expect(await textOf(page)).toContain('SaleRecorded');
  }, 60_000);

  it('shows an event whose data holds </script> and <img onerror> as text: no element, no dialog', async () => {
    const { page, errors } = await b.open();
    await b.signIn(page, 'operator', ADMIN_TOKEN);
    await b.visit(page, errors, `/console/events/${hostile.id}?stream=${encodeURIComponent(hostile.stream)}&revision=0`, 'event');
    expect(await page.$eval('[data-json="data"]', (el) => el.textContent)).toContain(JSON.stringify(HOSTILE).slice(1, -1));
    expect(await page.$eval('[data-json="metadata"]', (el) => el.textContent)).toContain('onerror');
    expect(await page.$('main img')).toBeNull();
    // Found by its id alone too, among the newest events.
    await b.visit(page, errors, `/console/events/${hostile.id}`, 'event-by-id');
    expect(b.dialogs).toEqual([]);
  });

  it('answers 404 for an unknown event or stream, 403 to a creator, and keeps the other mode out', async () => {
    const operator = new ConsoleClient(t, '10.1.0.1');
    await operator.signInAsOperator();
    const unknown = await operator.get(`/console/events/${randomUUID()}`);
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain('No event');
    expect((await operator.get(`/console/events/${randomUUID()}?stream=${encodeURIComponent(hostile.stream)}&revision=0`)).status).toBe(404);
    expect((await operator.get('/console/streams/no-such-stream')).status).toBe(404);
    expect((await operator.get('/console/events?before=not-a-position')).text).toContain('is not an event store position');

    // The hostile event is a test-mode event: a live-mode operator does not see it.
    const live = new ConsoleClient(t, '10.1.0.2');
    await live.signInAsOperator('live');
    expect((await live.get(`/console/events/${hostile.id}?stream=${encodeURIComponent(hostile.stream)}&revision=0`)).status).toBe(404);

    const creator = new ConsoleClient(t, '10.1.0.3');
    await creator.signIn('creator', seller.key);
    for (const url of ['/console/events', `/console/events/${hostile.id}`, `/console/streams/${encodeURIComponent(hostile.stream)}`]) {
      const res = await creator.get(url);
      expect([url, res.status]).toEqual([url, 403]);
    }
  });
});
