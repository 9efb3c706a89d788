import type { ProcessorEventParked } from '../src/commerce/parked-processor-events';
import type { Projection } from '../src/projection-runner/projection';

/** parked_processor_events: processor events no purchase could take, as `svc ledger parked` lists them. */
export const parkedProcessorEventsProjection: Projection = {
  name: 'parked_processor_events',
  version: 1,
  tables: ['parked_processor_events'],
  schema: `
    CREATE TABLE IF NOT EXISTS parked_processor_events (
      processor_event_id   text NOT NULL,
      mode                 text NOT NULL,
      processor            text NOT NULL,
      processor_event_type text NOT NULL,
      object_id            text NOT NULL,
      payment_reference    text,
      amount_cents         bigint,
      currency             text,
      reason               text NOT NULL,
      parked_at            timestamptz NOT NULL,
      PRIMARY KEY (mode, processor_event_id)
    );`,
  handles: ['ProcessorEventParked'],
  whenFailing: 'stop',
  async apply(tx, event) {
    const e = event.data as ProcessorEventParked;
    await tx.query(
      `INSERT INTO parked_processor_events (processor_event_id, mode, processor, processor_event_type, object_id, payment_reference,
         amount_cents, currency, reason, parked_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING`,
      [e.processor_event_id, e.mode, e.processor, e.processor_event_type, e.object_id, e.payment_reference, e.amount_cents, e.currency, e.reason, e.parked_at],
    );
  },
};
