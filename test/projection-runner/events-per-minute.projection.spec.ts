import { eventsPerMinuteProjection } from '../../projections/events-per-minute.projection';
import { projectionSpec } from '../support/decider-spec';

describe('events_per_minute projection', () => {
  it('counts every event of every stream and type in the minute it was appended', async () => {
    const at = (iso: string) => new Date(`2026-03-01T${iso}Z`);
    await projectionSpec(eventsPerMinuteProjection)
      .given([
        { streamId: 'listing-test-lst_1', type: 'ListingDrafted', data: { listing_id: 'lst_1' }, createdAt: at('12:00:00.000') },
        { streamId: 'ledger-live-acct_1', type: 'SaleRecorded', data: {}, createdAt: at('12:00:59.999') },
        { streamId: 'meter-acct_2', type: 'InferenceCallMetered', data: {}, createdAt: at('12:01:00.000') },
        { streamId: 'anything-else', type: 'SomethingNoProjectionReads', data: {}, createdAt: at('12:03:30.000') },
      ])
      .then('SELECT minute, events FROM events_per_minute ORDER BY minute', [
        { minute: at('12:00:00'), events: '2' },
        { minute: at('12:01:00'), events: '1' },
        { minute: at('12:03:00'), events: '1' },
      ]);
  });
});
