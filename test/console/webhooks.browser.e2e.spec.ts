import { publishModel } from '../catalog/catalog-client';
import { buy } from '../commerce/commerce-client';
import { EVENT_STORE, EventStore } from '../../src/event-store/event-store';
import { FAN_OUT_GROUP } from '../../src/webhooks/fan-out';
import { verifyWebhook } from '../../src/webhooks/verify-signature';
import { ADMIN_TOKEN, startTestApp, TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { createEndpoint, ENCRYPTION_KEY } from '../webhooks/helpers';
import { startReceiver } from '../webhooks/receiver';
import { ConsoleBrowser, consoleBrowser, sidewaysAt, textOf } from './browser';
import { ConsoleClient } from './console-client';

/**
 * Issue 26, webhooks: endpoints, deliveries by status with counts, one delivery's attempts,
 * a failed delivery resent from the page arriving signed, and the fan-out group, whose
 * parked events an operator replays from the page.
 */
describe('the console: webhooks (issue 26)', () => {
  let t: TestApp;
  let b: ConsoleBrowser;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let failing = true;
  let seller: { accountId: string; key: string };
  let endpoint: { id: string; secret: string };
  let failed: { id: string };

  beforeAll(async () => {
    // One attempt on the schedule: the first failure is final, so only a resend sends again.
    t = await startTestApp({ env: { WEBHOOK_RETRY_SCHEDULE: '0', WEBHOOK_TIMEOUT_MS: '5000', WEBHOOK_ENCRYPTION_KEY: ENCRYPTION_KEY } });
    b = await consoleBrowser(t);
    receiver = await startReceiver(() => (failing ? { status: 503, body: 'receiver down for maintenance' } : 204));
    seller = await t.accountWithKey({ scopes: ['models:upload', 'webhooks:write', 'payouts:read'], name: 'Webhook Robotics' });
    endpoint = await createEndpoint(t, seller.key, receiver.url, ['listing.purchased']);
    // An endpoint with a long URL (it never receives: no such event is made here), which must not widen the page.
    await createEndpoint(t, seller.key, `${receiver.url}/hooks/${'a-very-long-path-segment-of-a-receiver-'.repeat(6)}?token=${'x'.repeat(80)}`, ['factory.job.published']);
    const buyer = await t.accountWithKey({ scopes: ['models:read'] });
    const model = await publishModel(t, seller.key, { title: 'Gripper', price_cents: 1200 });
    await buy(t, buyer.key, model.id);
    failed = await eventually(async () => {
      const res = await t.request('GET', `/v1/webhook_endpoints/${endpoint.id}/events`, { key: seller.key });
      return res.body.items.find((d: any) => d.status === 'failed');
    }, 20_000, 'the delivery to fail');
  }, 120_000);
  afterAll(async () => {
    await b?.close();
    await t?.close();
    await receiver?.close();
  });

  it('shows endpoints, counts and deliveries; a failed delivery resent from the page arrives signed', async () => {
    const { page, errors } = await b.open();
    await b.signIn(page, 'operator', ADMIN_TOKEN);
    await b.visit(page, errors, `/console/webhooks?account=${seller.accountId}`, 'webhooks');
    expect(await sidewaysAt(page, 1280)).toBe(0);
    expect(await sidewaysAt(page, 390, 'webhooks-390')).toBe(0);
    expect(await page.$eval('[data-count="failed"] .value', (el) => el.textContent)).toBe('1');
    expect(await page.$(`tr[data-endpoint="${endpoint.id}"]`)).not.toBeNull();
    expect(await page.$eval('[data-group="webhook_fan_out"]', (el) => el.textContent)).toContain('No event is parked');
    await b.visit(page, errors, '/console/webhooks?status=failed', 'webhooks-failed');
    expect(await page.$(`tr[data-delivery="${failed.id}"]`)).not.toBeNull();

    await b.visit(page, errors, `/console/webhooks/deliveries/${failed.id}`, 'webhook-delivery');
    expect(await page.$eval('tr[data-attempt="1"] [data-response]', (el) => el.textContent)).toBe('503');
    expect(await textOf(page)).toContain('receiver down for maintenance');

    failing = false;
    const before = receiver.received.length;
    await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('form[action$="/resend"] button')]);
    expect(await page.$eval('[role="status"]', (el) => el.textContent)).toContain('another attempt');
    await eventually(() => receiver.received.length > before, 20_000, 'the resent delivery to arrive');
    const arrived = receiver.received[receiver.received.length - 1];
    const event = verifyWebhook(arrived.body, arrived.headers['svc-signature'], endpoint.secret);
    expect(event.type).toBe('listing.purchased');

    // The page then shows the second attempt and its 204.
    await eventually(async () => {
      await page.goto(`${b.base}/console/webhooks/deliveries/${failed.id}`, { waitUntil: 'load' });
      return (await page.$('tr[data-attempt="2"]')) && (await page.$eval('tr[data-attempt="2"] [data-response]', (el) => el.textContent)) === '204';
    }, 20_000, 'the second attempt on the page');
    expect(await page.$eval('[data-status]', (el) => el.getAttribute('data-status'))).toBe('succeeded');
    // The delivery's event, one click away.
    await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('a[data-follow="event"]')]);
    expect(await page.$eval('dl[data-event] dd', (el) => el.textContent)).toBe('PurchaseCompleted');
    expect(errors).toEqual([]);
    expect(b.dialogs.every((d) => d.startsWith('confirm'))).toBe(true);
  }, 60_000);

  it('answers 404 for an unknown delivery, 403 to a creator, and resends nothing without the CSRF token', async () => {
    const operator = new ConsoleClient(t, '10.2.0.1');
    await operator.signInAsOperator();
    const unknown = await operator.get('/console/webhooks/deliveries/whd_nope');
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain('No webhook delivery');

    // Another mode's operator neither sees nor resends it.
    const live = new ConsoleClient(t, '10.2.0.2');
    await live.signInAsOperator('live');
    expect((await live.get(`/console/webhooks/deliveries/${failed.id}`)).status).toBe(404);

    const page = await operator.get(`/console/webhooks/deliveries/${failed.id}`);
    expect(page.status).toBe(200);
    const attempts = async () => (await t.db.query<{ attempts: number }>('SELECT attempts FROM webhook_deliveries WHERE id = $1', [failed.id])).rows[0].attempts;
    const sent = receiver.received.length;
    const before = await attempts();
    expect((await operator.post(`/console/webhooks/deliveries/${failed.id}/resend`, {})).status).toBe(403);
    expect((await operator.post(`/console/webhooks/deliveries/${failed.id}/resend`, { _csrf: 'not-this-sessions' })).status).toBe(403);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await attempts()).toBe(before);
    expect(receiver.received.length).toBe(sent);
    expect((await t.db.query('SELECT status FROM webhook_deliveries WHERE id = $1', [failed.id])).rows[0].status).not.toBe('pending');

    const creator = new ConsoleClient(t, '10.2.0.3');
    await creator.signIn('creator', seller.key);
    expect((await creator.get('/console/webhooks')).status).toBe(403);
    expect((await creator.get(`/console/webhooks/deliveries/${failed.id}`)).status).toBe(403);
    const creatorPage = await creator.get('/console/home');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(creatorPage.text)?.[1] ?? '';
    expect((await creator.post(`/console/webhooks/deliveries/${failed.id}/resend`, { _csrf: csrf })).status).toBe(403);
    expect(await attempts()).toBe(before);
  });

  describe('parked events of the fan-out group', () => {
    let parkedSeller: { accountId: string; key: string };
    let parkedEndpoint: { id: string; secret: string };
    let store: EventStore;
    const deliveriesOf = async () => (await t.request('GET', `/v1/webhook_endpoints/${parkedEndpoint.id}/events`, { key: parkedSeller.key })).body.items as any[];

    beforeAll(async () => {
      store = t.app.get<EventStore>(EVENT_STORE);
      parkedSeller = await t.accountWithKey({ scopes: ['models:upload', 'webhooks:write'], name: 'Parked Robotics' });
      parkedEndpoint = await createEndpoint(t, parkedSeller.key, receiver.url, ['listing.purchased']);
      // The fan-out cannot write this account's deliveries: every attempt at its purchase fails, and the group parks it.
      await t.db.exec(`
        CREATE FUNCTION refuse_parked_robotics() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.account_id = '${parkedSeller.accountId}' THEN RAISE EXCEPTION 'deliveries of Parked Robotics refused by the test'; END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER refuse_parked_robotics BEFORE INSERT ON webhook_deliveries FOR EACH ROW EXECUTE FUNCTION refuse_parked_robotics();`);
      const buyer = await t.accountWithKey({ scopes: ['models:read'] });
      const model = await publishModel(t, parkedSeller.key, { title: 'Parked Gripper', price_cents: 900 });
      await buy(t, buyer.key, model.id);
      await eventually(async () => (await store.parkedEvents(FAN_OUT_GROUP)).length === 1, 30_000, 'the fan-out to park the purchase');
    }, 60_000);
    afterAll(async () => {
      await t.db.exec('DROP TRIGGER IF EXISTS refuse_parked_robotics ON webhook_deliveries; DROP FUNCTION IF EXISTS refuse_parked_robotics();');
    });

    it('replays nothing for a POST without this session’s CSRF token, or from a creator', async () => {
      const operator = new ConsoleClient(t, '10.2.1.1');
      await operator.signInAsOperator();
      expect((await operator.get('/console/webhooks')).text).toContain('action="/console/webhooks/replay-parked"');
      expect((await operator.post('/console/webhooks/replay-parked', {})).status).toBe(403);
      expect((await operator.post('/console/webhooks/replay-parked', { _csrf: 'not-this-sessions' })).status).toBe(403);
      // Another session's token is not this one's.
      const other = new ConsoleClient(t, '10.2.1.2');
      await other.signInAsOperator();
      const otherToken = ConsoleClient.csrfOf((await other.get('/console/webhooks')).text);
      expect((await operator.post('/console/webhooks/replay-parked', { _csrf: otherToken })).status).toBe(403);
      const creator = new ConsoleClient(t, '10.2.1.3');
      await creator.signIn('creator', parkedSeller.key);
      const creatorToken = ConsoleClient.csrfOf((await creator.get('/console/my-webhooks')).text);
      expect((await creator.post('/console/webhooks/replay-parked', { _csrf: creatorToken })).status).toBe(403);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await store.parkedEvents(FAN_OUT_GROUP)).toHaveLength(1);
      expect(await deliveriesOf()).toEqual([]);
      // The notice's number travels as digits only; anything else gets the notice without one.
      expect((await operator.get('/console/webhooks?notice=parked-replayed&count=0')).text).toContain('No event was parked: nothing was replayed.');
      expect((await operator.get(`/console/webhooks?notice=parked-replayed&count=${encodeURIComponent('<b>9</b>')}`)).text).toContain('The parked events were handed to the fan-out again.');
    });

    it('replays them from the page: the event becomes its delivery, once, and the notice says how many', async () => {
      const { page, errors } = await b.open();
      await b.signIn(page, 'operator', ADMIN_TOKEN);
      await b.visit(page, errors, `/console/webhooks?account=${parkedSeller.accountId}`, 'webhooks-parked');
      expect(await page.$eval('[data-parked-count]', (el) => el.textContent)).toBe('1');
      const [parked] = await store.parkedEvents(FAN_OUT_GROUP);
      expect(await page.$(`tr[data-parked="${parked.id}"]`)).not.toBeNull();
      expect(await deliveriesOf()).toEqual([]);
      // The risk of a replay on EventStoreDB is said next to the button.
      expect(await page.$eval('[data-replay-risk]', (el) => el.textContent)).toBe('On EventStoreDB, a replayed event not yet fanned out when a node restarts or fails over is lost');

      // The cause fixed, the operator replays.
      await t.db.exec('DROP TRIGGER refuse_parked_robotics ON webhook_deliveries; DROP FUNCTION refuse_parked_robotics();');
      const dialogs = b.dialogs.length;
      await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('form[action="/console/webhooks/replay-parked"] button')]);
      expect(b.dialogs.slice(dialogs)).toEqual([`confirm: Replay the parked event of ${FAN_OUT_GROUP}, of every mode?`]);
      expect(new URL(page.url()).pathname).toBe('/console/webhooks');
      expect(await page.$eval('[role="status"]', (el) => el.textContent)).toContain('1 parked event was replayed');
      expect(await page.$eval('[data-parked-count]', (el) => el.textContent)).toBe('0');
      expect(await page.$eval('[data-group="webhook_fan_out"]', (el) => el.textContent)).toContain('No event is parked');
      expect(await page.$('form[action="/console/webhooks/replay-parked"]')).toBeNull();

      // The fan-out handled the purchase: its delivery exists and arrives signed.
      const delivered = await eventually(async () => (await deliveriesOf()).find((d) => d.status === 'succeeded'), 20_000, 'the replayed purchase to be delivered');
      const arrived = await eventually(() => receiver.received.find((r) => JSON.parse(r.body).id === delivered.event_id), 5000, 'the delivery at the receiver');
      expect(verifyWebhook(arrived.body, arrived.headers['svc-signature'], parkedEndpoint.secret).type).toBe('listing.purchased');
      // Handled once: one delivery, and nothing parked again.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(await deliveriesOf()).toHaveLength(1);
      expect(await store.parkedEvents(FAN_OUT_GROUP)).toEqual([]);
      expect(errors).toEqual([]);
    }, 60_000);
  });
});
