import { EsdbStandIn } from '../support/esdb-standin';
import { startTestApp, TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { createEndpoint, deliveries, emit, ENCRYPTION_KEY, evtId, payoutPaid } from './helpers';
import { startReceiver } from './receiver';

/**
 * The webhook fan-out's persistent group across an EventStoreDB node restart (on the
 * stand-in, which reloads the group from its last checkpoint as the server does): events
 * acknowledged since that checkpoint are handed to the fan-out again, and still each is
 * delivered once, counted at the receiver and in the delivery log.
 */
describe('webhook deliveries across an EventStoreDB node restart', () => {
  let standIn: EsdbStandIn;
  let t: TestApp;
  beforeAll(async () => {
    standIn = await new EsdbStandIn().start();
    t = await startTestApp({ env: { EVENTSTORE_URL: standIn.url, WEBHOOK_RETRY_SCHEDULE: '0,1,1', WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_ENCRYPTION_KEY: ENCRYPTION_KEY } });
  });
  afterAll(async () => {
    await t?.close();
    await standIn.stop();
  });

  it('delivers each event once although the restarted node hands the fan-out what it acknowledged since its checkpoint again', async () => {
    const receiver = await startReceiver(() => 204);
    try {
      const { accountId, key } = await t.accountWithKey({ mode: 'test' });
      const ep = await createEndpoint(t, key, receiver.url, ['payout.paid']);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await emit(t, 'PayoutPaid', payoutPaid(accountId, 'test'))).id);
      await eventually(() => receiver.received.length >= 3, 15_000, 'the first deliveries');
      const fannedOut: string[] = [];
      const fanOut = t.app.get((await import('../../src/webhooks/fan-out')).WebhookFanOut);
      fanOut.events.on('handled', (id: string) => fannedOut.push(id));

      await standIn.restart(300);
      for (let i = 0; i < 2; i++) ids.push((await emit(t, 'PayoutPaid', payoutPaid(accountId, 'test'))).id);
      await eventually(() => receiver.received.length >= 5, 20_000, 'the deliveries after the restart');
      // The restarted node handed the first three to the fan-out again (fewer than its minimum checkpoint count had been processed).
      await eventually(() => ids.slice(0, 3).every((id) => fannedOut.includes(id)), 20_000, 'the first three fanned out again');
      await new Promise((r) => setTimeout(r, 1500));

      const got = receiver.events().map((e) => e.id);
      expect(got.sort()).toEqual(ids.map(evtId).sort());
      const log = await deliveries(t, key, ep.id);
      expect(log.map((d) => d.event_id).sort()).toEqual(ids.map(evtId).sort());
      expect(log.every((d) => d.status === 'succeeded' && d.attempts === 1)).toBe(true);
    } finally {
      await receiver.close();
    }
  });
});
