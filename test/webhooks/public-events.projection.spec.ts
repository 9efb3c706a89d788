import { randomUUID } from 'node:crypto';
import { publicEventsProjection } from '../../projections/public-events.projection';
import { RecordedEvent, toPosition } from '../../src/event-store/event-store';
import { EventQueries } from '../../src/webhooks/event-queries';
import { emptyPglite } from '../support/database';
import { projectionSpec } from '../support/decider-spec';

describe('public_events projection', () => {
  const listing = { id: 'lst_1', slug: 'grasp', title: 'Grasp' };
  const payout = { id: 'po_1', object: 'payout', amount_cents: 500, currency: 'usd', status: 'failed' };
  const at = new Date('2026-03-01T12:00:00.750Z');

  it('keeps each public event as its webhook envelope, under the receiving account and mode', async () => {
    await projectionSpec(publicEventsProjection)
      .given([
        { streamId: 'listing-test-lst_1', type: 'ListingPublished', data: { listing_id: 'lst_1', account_id: 'acct_seller', mode: 'test', listing }, createdAt: at },
        {
          streamId: 'checkout-live-cs_1',
          type: 'PurchaseCompleted',
          data: { mode: 'live', seller_account_id: 'acct_seller', buyer_account_id: 'acct_buyer', purchase: { id: 'pur_1' }, listing },
          createdAt: at,
        },
        { streamId: 'ledger-test-acct_seller', type: 'PayoutFailed', data: { account_id: 'acct_seller', mode: 'test', payout }, createdAt: at },
      ])
      .then(
        `SELECT account_id, mode, type, created, payload::jsonb - 'id' AS envelope, payload::jsonb ->> 'id' = id AND id ~ '^evt_[0-9a-f]{32}$' AS id_ok
           FROM public_events ORDER BY position`,
        [
          { account_id: 'acct_seller', mode: 'test', type: 'listing.published', created: at, envelope: { type: 'listing.published', created: 1772366400, data: { listing } }, id_ok: true },
          {
            account_id: 'acct_seller',
            mode: 'live',
            type: 'listing.purchased',
            created: at,
            envelope: { type: 'listing.purchased', created: 1772366400, data: { purchase: { id: 'pur_1' }, listing } },
            id_ok: true,
          },
          { account_id: 'acct_seller', mode: 'test', type: 'payout.failed', created: at, envelope: { type: 'payout.failed', created: 1772366400, data: { payout } }, id_ok: true },
        ],
      );
  });

  it('keeps nothing for events with no public type, no owner or no mode', async () => {
    await projectionSpec(publicEventsProjection)
      .given([
        // A failure recorded before failures carried their payout fires no webhook.
        { streamId: 'ledger-test-acct_1', type: 'PayoutFailed', data: { account_id: 'acct_1', mode: 'test', payout_id: 'po_1' } },
        { streamId: 'listing-test-lst_1', type: 'ListingPublished', data: { listing_id: 'lst_1', mode: 'test', listing } },
        { streamId: 'listing-xx-lst_1', type: 'ListingPublished', data: { listing_id: 'lst_1', account_id: 'acct_1', listing } },
        { streamId: 'listing-test-lst_1', type: 'ListingDrafted', data: { listing_id: 'lst_1', account_id: 'acct_1', mode: 'test' } },
      ])
      .then('SELECT * FROM public_events', []);
  });

  it('counts the events per mode, minute (of their time) and type as it keeps them', async () => {
    const minute = new Date('2026-03-01T12:00:00Z');
    const later = new Date('2026-03-01T12:01:59.999Z');
    const published = (mode: string, createdAt: Date) => ({ streamId: 'listing-test-lst_1', type: 'ListingPublished', data: { listing_id: 'lst_1', account_id: 'acct_seller', mode, listing }, createdAt });
    await projectionSpec(publicEventsProjection)
      .given([
        published('test', at),
        published('test', minute),
        published('live', at),
        { streamId: 'ledger-test-acct_seller', type: 'PayoutFailed', data: { account_id: 'acct_seller', mode: 'test', payout }, createdAt: at },
        published('test', later),
        // No public event: not counted.
        { streamId: 'listing-test-lst_1', type: 'ListingDrafted', data: { listing_id: 'lst_1', account_id: 'acct_1', mode: 'test' }, createdAt: at },
      ])
      .then(`SELECT mode, minute, type, events FROM public_events_per_minute ORDER BY mode, minute, type`, [
        { mode: 'live', minute, type: 'listing.published', events: '1' },
        { mode: 'test', minute, type: 'listing.published', events: '2' },
        { mode: 'test', minute, type: 'payout.failed', events: '1' },
        { mode: 'test', minute: new Date('2026-03-01T12:01:00Z'), type: 'listing.published', events: '1' },
      ]);
  });

  it('counts an event applied again (a replay, a parked event retried) once: only rows it inserted count', async () => {
    const db = await emptyPglite();
    try {
      await db.exec(publicEventsProjection.schema);
      const event = (i: number): RecordedEvent => ({
        id: randomUUID(),
        streamId: 'listing-test-lst_1',
        revision: i,
        type: 'ListingPublished',
        data: { listing_id: 'lst_1', account_id: 'acct_seller', mode: 'test', listing },
        metadata: {},
        position: toPosition(i + 1, i + 1),
        createdAt: at,
      });
      const [first, second, third] = [event(0), event(1), event(2)];
      await db.transaction((tx) => publicEventsProjection.applyBatch!(tx, [first, second]));
      // The same events again, one by one and in a batch with a new one.
      await db.transaction((tx) => publicEventsProjection.apply(tx, first));
      await db.transaction((tx) => publicEventsProjection.applyBatch!(tx, [first, second, third]));
      const { rows } = await db.query('SELECT mode, minute, type, events FROM public_events_per_minute');
      expect(rows).toEqual([{ mode: 'test', minute: new Date('2026-03-01T12:00:00Z'), type: 'listing.published', events: '3' }]);
      expect((await db.query('SELECT count(*)::int AS n FROM public_events')).rows).toEqual([{ n: 3 }]);
    } finally {
      await db.close();
    }
  });

  it('perMinute answers from the counts what counting the events answers, and counts the events while version 1 (no counts) serves', async () => {
    const db = await emptyPglite();
    try {
      await db.exec(publicEventsProjection.schema);
      const events = [at, at, new Date('2026-03-01T12:03:10Z'), new Date('2026-03-01T11:58:59Z')].map(
        (createdAt, i): RecordedEvent => ({
          id: randomUUID(),
          streamId: 'listing-test-lst_1',
          revision: i,
          type: i === 1 ? 'ListingUnpublished' : 'ListingPublished',
          data: { listing_id: 'lst_1', account_id: 'acct_seller', mode: i === 2 ? 'live' : 'test', listing },
          metadata: {},
          position: toPosition(i + 1, i + 1),
          createdAt,
        }),
      );
      await db.transaction((tx) => publicEventsProjection.applyBatch!(tx, events));
      const queries = new EventQueries(db);
      const since = new Date('2026-03-01T11:59:00Z');
      const fromCounts = await queries.perMinute('test', since);
      expect(fromCounts).toEqual([
        { minute: new Date('2026-03-01T12:00:00Z'), type: 'listing.published', events: 1 },
        { minute: new Date('2026-03-01T12:00:00Z'), type: 'listing.unpublished', events: 1 },
      ]);
      await db.exec('DROP TABLE public_events_per_minute');
      expect(await queries.perMinute('test', since)).toEqual(fromCounts);
      expect(await queries.perMinute('live', since)).toEqual([{ minute: new Date('2026-03-01T12:03:00Z'), type: 'listing.published', events: 1 }]);
    } finally {
      await db.close();
    }
  });
});
