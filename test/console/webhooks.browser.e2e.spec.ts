import { publishModel } from '../catalog/catalog-client';
import { buy } from '../commerce/commerce-client';
import { verifyWebhook } from '../../src/webhooks/verify-signature';
import { ADMIN_TOKEN, startTestApp, TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { createEndpoint, ENCRYPTION_KEY } from '../webhooks/helpers';
import { startReceiver } from '../webhooks/receiver';
import { ConsoleBrowser, consoleBrowser, textOf } from './browser';
import { ConsoleClient } from './console-client';

/**
 * Issue 26, webhooks: endpoints, deliveries by status with counts, one delivery's attempts,
 * a failed delivery resent from the page arriving signed, and the fan-out group.
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
    await Promise.all([page.waitForNavigation({ waitUntil: 'networkidle0' }), page.click('form[action$="/resend"] button')]);
    expect(await page.$eval('[role="status"]', (el) => el.textContent)).toContain('another attempt');
    await eventually(() => receiver.received.length > before, 20_000, 'the resent delivery to arrive');
    const arrived = receiver.received[receiver.received.length - 1];
    const event = verifyWebhook(arrived.body, arrived.headers['svc-signature'], endpoint.secret);
    expect(event.type).toBe('listing.purchased');

    // The page then shows the second attempt and its 204.
    await eventually(async () => {
      await page.goto(`${b.base}/console/webhooks/deliveries/${failed.id}`, { waitUntil: 'networkidle0' });
      return (await page.$('tr[data-attempt="2"]')) && (await page.$eval('tr[data-attempt="2"] [data-response]', (el) => el.textContent)) === '204';
    }, 20_000, 'the second attempt on the page');
    expect(await page.$eval('[data-status]', (el) => el.getAttribute('data-status'))).toBe('succeeded');
    // The delivery's event, one click away.
    await Promise.all([page.waitForNavigation({ waitUntil: 'networkidle0' }), page.click('a[data-follow="event"]')]);
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
});
