import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { AdminClient } from '../../src/cli/admin-client';
import { listenAndForward } from '../../src/cli/webhooks-listen';
import { ADMIN_TOKEN, startTestApp, TestApp } from '../support/app';
import { emit, evtId, payoutPaid } from './helpers';
import { eventually } from '../support/eventually';
import { startReceiver } from './receiver';

describe('svc webhooks listen', () => {
  let t: TestApp;
  let client: AdminClient;
  beforeAll(async () => {
    t = await startTestApp({ env: { WEBHOOK_RETRY_SCHEDULE: '0,1' } });
    await t.app.listen(0, '127.0.0.1');
    const address = t.app.getHttpServer().address() as AddressInfo;
    client = new AdminClient(`http://127.0.0.1:${address.port}`, ADMIN_TOKEN);
  });
  afterAll(() => t.close());

  it('creates a temporary test endpoint, forwards signed deliveries, prints them and deletes the endpoint on exit', async () => {
    const local = await startReceiver();
    const { accountId } = await t.accountWithKey({ mode: 'test' });
    const lines: string[] = [];
    let stop!: () => void;
    const until = new Promise<void>((resolve) => (stop = resolve));
    const running = listenAndForward(client, { account: accountId, mode: 'test', forwardTo: local.url, log: (l) => lines.push(l), until });
    try {
      const ready = await eventually(() => lines.find((l) => l.includes('signing secret')), 15000, 'the listener to be ready');
      const secret = /(whsec_test_\w+)/.exec(ready)![1];
      const endpointId = /endpoint (we_\w+)/.exec(ready)![1];

      const { id } = await emit(t, 'PayoutPaid', payoutPaid(accountId, 'test'));
      await eventually(() => local.received.length === 1, 15000, 'the forwarded delivery');
      const [got] = local.received;
      const event = new Stripe('sk_test_unused').webhooks.constructEvent(got.body, got.headers['svc-signature'] as string, secret) as any;
      expect(event).toMatchObject({ id: evtId(id), type: 'payout.paid' });
      await eventually(() => lines.some((l) => l.startsWith('<-- [204]')), 15000, 'the forward to be printed');
      expect(lines).toContain(`--> payout.paid [${evtId(id)}]`);

      stop();
      expect(await running).toEqual({ endpoint_id: endpointId, forwarded: 1, deleted: true });
      const { rows } = await t.db.query('SELECT 1 FROM webhook_endpoints WHERE id = $1', [endpointId]);
      expect(rows).toHaveLength(0);
    } finally {
      stop();
      await running.catch(() => undefined);
      await local.close();
    }
  });

  it('refuses to create the relay endpoint for an unknown account', async () => {
    await expect(
      listenAndForward(client, { account: 'no-such-account', mode: 'test', forwardTo: 'http://127.0.0.1:1/x', log: () => undefined, until: Promise.resolve() }),
    ).rejects.toMatchObject({ code: 'not_found' });
  });
});
