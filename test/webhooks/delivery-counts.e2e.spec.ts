import * as fs from 'node:fs';
import * as path from 'node:path';
import { migrationsDir } from '../../src/database/migrate';
import { DeliveryLog } from '../../src/webhooks/delivery-log';
import { ATTEMPT_COUNTS_KEPT_HOURS } from '../../src/webhooks/delivery-worker';
import { startTestApp, TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { createEndpoint, deliveries, emit, ENCRYPTION_KEY, payoutPaid } from './helpers';
import { startReceiver } from './receiver';

/**
 * The console's webhook counts. The overview's chart reads webhook_attempts_per_minute, counted by the delivery
 * worker in the statement that records each batch of outcomes (migration 0205 made the table
 * and counted what was there). Its answer must be what counting the attempts gives.
 */
describe('webhook delivery counts', () => {
  let t: TestApp;
  const receivers: { close(): Promise<void> }[] = [];
  // One attempt a delivery: a 500 fails it for good, so each delivery makes exactly one attempt.
  beforeAll(async () => {
    t = await startTestApp({ env: { WEBHOOK_RETRY_SCHEDULE: '0', WEBHOOK_TIMEOUT_MS: '5000', WEBHOOK_ENCRYPTION_KEY: ENCRYPTION_KEY } });
  });
  afterAll(async () => {
    await t.close();
    for (const r of receivers) await r.close();
  });

  /** The attempts counted from webhook_delivery_attempts, as attemptsPerMinute did before the counts were kept. */
  const counted = async (mode: string, since: Date) =>
    (
      await t.db.query<{ minute: Date; succeeded: string; failed: string }>(
        `SELECT date_trunc('minute', a.finished_at) AS minute,
                count(*) FILTER (WHERE a.response_status BETWEEN 200 AND 299) AS succeeded,
                count(*) FILTER (WHERE a.response_status IS NULL OR a.response_status NOT BETWEEN 200 AND 299) AS failed
           FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
          WHERE a.finished_at >= $2 AND d.mode = $1 GROUP BY 1 ORDER BY 1`,
        [mode, since.toISOString()],
      )
    ).rows.map((r) => ({ minute: new Date(r.minute), succeeded: Number(r.succeeded), failed: Number(r.failed) }));
  const total = (rows: { succeeded: number; failed: number }[]) => rows.reduce((sum, r) => ({ succeeded: sum.succeeded + r.succeeded, failed: sum.failed + r.failed }), { succeeded: 0, failed: 0 });

  // First in the file: the worker deletes expired counts with the first outcomes it records, then once a minute.
  it('keeps the counts a day: recording outcomes deletes the minutes older than that, and only those', async () => {
    const hoursAgo = (h: number) => new Date(Math.floor(Date.now() / 60_000) * 60_000 - h * 3_600_000);
    await t.db.query(
      `INSERT INTO webhook_attempts_per_minute (mode, minute, succeeded, failed) VALUES ('test', $1, 3, 1), ('live', $1, 1, 0), ('test', $2, 2, 0)`,
      [hoursAgo(ATTEMPT_COUNTS_KEPT_HOURS + 1).toISOString(), hoursAgo(ATTEMPT_COUNTS_KEPT_HOURS - 1).toISOString()],
    );
    const ok = await startReceiver(() => 204);
    receivers.push(ok);
    const seller = await t.accountWithKey({ mode: 'test' });
    const endpoint = await createEndpoint(t, seller.key, ok.url, ['payout.paid']);
    await emit(t, 'PayoutPaid', payoutPaid(seller.accountId, 'test'));
    await eventually(async () => (await deliveries(t, seller.key, endpoint.id))[0]?.status === 'succeeded', 20_000, 'the delivery to succeed');

    const log = t.app.get(DeliveryLog);
    const older = (mode: 'test' | 'live') => log.attemptsPerMinute(mode, hoursAgo(ATTEMPT_COUNTS_KEPT_HOURS + 2));
    expect((await older('test')).filter((m) => m.minute < hoursAgo(1))).toEqual([{ minute: hoursAgo(ATTEMPT_COUNTS_KEPT_HOURS - 1), succeeded: 2, failed: 0 }]);
    expect(await older('live')).toEqual([]);
    expect(total(await log.attemptsPerMinute('test', hoursAgo(1)))).toEqual({ succeeded: 1, failed: 0 });
    // Left as found, so the tests below count only their own attempts.
    await t.db.exec('DELETE FROM webhook_attempts_per_minute; DELETE FROM webhook_delivery_attempts');
  });

  it('counts a 2xx as succeeded and a 500 as failed in their minute and mode; another mode counts apart', async () => {
    const since = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    const ok = await startReceiver(() => 204);
    const broken = await startReceiver(() => 500);
    receivers.push(ok, broken);
    const seller = await t.accountWithKey({ mode: 'test' });
    const toOk = await createEndpoint(t, seller.key, ok.url, ['payout.paid']);
    const toBroken = await createEndpoint(t, seller.key, broken.url, ['payout.paid']);
    // A live endpoint whose host then resolves to loopback (as in delivery.e2e): its attempt is refused, in live mode.
    const live = await t.admin('POST', '/admin/keys', { account: seller.accountId, mode: 'live' });
    const liveEp = await createEndpoint(t, live.body.key, 'https://93.184.216.34/hooks', ['payout.paid']);
    await t.db.query('UPDATE webhook_endpoints SET url = $2 WHERE id = $1', [liveEp.id, `https://localhost:${ok.port}/rebound`]);

    await emit(t, 'PayoutPaid', payoutPaid(seller.accountId, 'test'));
    await emit(t, 'PayoutPaid', payoutPaid(seller.accountId, 'live'));
    const settled = async (key: string, endpointId: string) => {
      const log = await deliveries(t, key, endpointId);
      return log.length === 1 && log[0].status !== 'pending';
    };
    await eventually(async () => (await settled(seller.key, toOk.id)) && (await settled(seller.key, toBroken.id)) && (await settled(live.body.key, liveEp.id)), 20_000, 'three deliveries to settle');

    const log = t.app.get(DeliveryLog);
    const test = await log.attemptsPerMinute('test', since);
    expect(total(test)).toEqual({ succeeded: 1, failed: 1 });
    expect(total(await log.attemptsPerMinute('live', since))).toEqual({ succeeded: 0, failed: 1 });
    // What counting the attempts answers, minute by minute.
    expect(test).toEqual(await counted('test', since));
    expect(await log.attemptsPerMinute('live', since)).toEqual(await counted('live', since));
    // One attempt each: the counts are of attempts, not of deliveries.
    expect(ok.received).toHaveLength(1);
    expect(broken.received).toHaveLength(1);
  });

  it('migration 0205 counts the attempts recorded before it', async () => {
    const since = new Date(0);
    const before = { test: await counted('test', since), live: await counted('live', since) };
    expect(total(before.test).succeeded).toBeGreaterThan(0);
    await t.db.exec('DELETE FROM webhook_attempts_per_minute');
    await t.db.exec(fs.readFileSync(path.join(migrationsDir(), '0205_webhook_attempts_per_minute.sql'), 'utf8'));
    const log = t.app.get(DeliveryLog);
    expect({ test: await log.attemptsPerMinute('test', since), live: await log.attemptsPerMinute('live', since) }).toEqual(before);
  });

  it('counts deliveries by status in a mode, each up to a cap: one more than the cap stands for more', async () => {
    const log = t.app.get(DeliveryLog);
    // The tests above left test mode two succeeded deliveries and one failed, live mode one failed.
    expect(await log.countsByStatus({ mode: 'test' })).toEqual({ pending: 0, succeeded: 2, failed: 1 });
    expect(await log.countsByStatus({ mode: 'live' })).toEqual({ pending: 0, succeeded: 0, failed: 1 });
    expect(await log.countsByStatus({ mode: 'test' }, 1)).toEqual({ pending: 0, succeeded: 2, failed: 1 });
    expect(await log.countsByStatus({ mode: 'test' }, 2)).toEqual({ pending: 0, succeeded: 2, failed: 1 });
    expect(await log.countsByStatus({ mode: 'test' }, 0)).toEqual({ pending: 0, succeeded: 1, failed: 1 });
    expect(await log.countsByStatus({ mode: 'test', accountId: 'acct_nobody' })).toEqual({ pending: 0, succeeded: 0, failed: 0 });
  });
});
