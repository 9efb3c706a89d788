import { Streams } from '../../src/platform/streams';
import * as fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import { PostgresEventStore } from '../../src/event-store/postgres/postgres-event-store';
import { eventStoreEnv, startTestApp } from '../support/app';
import { EventStoreDbEventStore } from '../../src/event-store/eventstoredb/eventstoredb-event-store';
import { createEndpoint, deliveries, emit, ENCRYPTION_KEY, evtId, payoutPaid } from './helpers';
import { eventually } from '../support/eventually';
import { startReceiver } from './receiver';

const env = { WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1', WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_ENCRYPTION_KEY: ENCRYPTION_KEY };

describe('webhook delivery across a service stop', () => {
  it('delivers every event at least once after the service stops mid-delivery and restarts', async () => {
    let up = false;
    const receiver = await startReceiver(() => (up ? 204 : 'hang'));
    const first = await startTestApp({ env });
    let second: Awaited<ReturnType<typeof startTestApp>> | undefined;
    try {
      const { accountId, key } = await first.accountWithKey({ mode: 'test' });
      const ep = await createEndpoint(first, key, receiver.url, ['payout.paid']);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await emit(first, 'PayoutPaid', payoutPaid(accountId, 'test'))).id);
      // Every delivery is in flight to a receiver that does not answer when the service goes away.
      await eventually(() => receiver.received.length >= 3, 15000, 'deliveries in flight');
      await first.app.close();

      // Events recorded by other instances while this one is down.
      // Through a store of its own on the same log (Postgres, or the EventStoreDB stand-in).
      const url = (await eventStoreEnv(first.database)).EVENTSTORE_URL;
      const store = url ? new EventStoreDbEventStore({ url }) : new PostgresEventStore(first.db);
      for (let i = 0; i < 2; i++) {
        const id = randomUUID();
        await store.append(Streams.ledger('test', accountId), [{ id, type: 'PayoutPaid', data: payoutPaid(accountId, 'test') }], 'any');
        ids.push(id);
      }
      await store.close();

      up = true;
      second = await startTestApp({ shared: first.database, env });
      await eventually(async () => {
        const got = new Set(receiver.events().map((e) => e.id));
        return ids.every((id) => got.has(evtId(id)));
      }, 30000, 'every event to arrive');
      const log = await eventually(async () => {
        const entries = await deliveries(second!, key, ep.id);
        return entries.length === 5 && entries.every((d) => d.status === 'succeeded') && entries;
      }, 30000, 'the log to settle');
      expect(log.map((d) => d.event_id).sort()).toEqual(ids.map(evtId).sort());
      // The interrupted attempts are counted and visible.
      const interrupted = log.filter((d) => ids.slice(0, 3).map(evtId).includes(d.event_id));
      expect(interrupted.every((d) => d.attempts >= 2)).toBe(true);
      const { rows } = await second.db.query(
        `SELECT count(*)::int AS n FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
          WHERE d.endpoint_id = $1 AND a.finished_at IS NULL`,
        [ep.id],
      );
      expect(rows[0].n).toBeGreaterThanOrEqual(1);
    } finally {
      await second?.close();
      if (second) {
        // The first app is already closed; only its database and data dir are left.
        await first.database.drop();
        fs.rmSync(first.dataDir, { recursive: true, force: true });
      } else {
        await first.close();
      }
      await receiver.close();
    }
  });
});
