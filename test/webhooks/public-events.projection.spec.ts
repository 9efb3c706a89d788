import { publicEventsProjection } from '../../projections/public-events.projection';
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
});
