import { Inject, Injectable, Logger } from '@nestjs/common';
import { DATABASE, Database } from '../database/database';
import { WrongExpectedRevisionError } from '../event-store/event-store';
import type { Mode } from '../platform/mode';
import { inMode } from '../platform/owner-scope';
import { Streams } from '../platform/streams';
import { EventWriter } from '../projection-runner/event-writer';

/**
 * A processor event that names money we cannot place: a dispute or a partial refund of a
 * payment that is none of our purchases, or one our books refuse (a dispute of a refunded
 * purchase). Not dropped and not a 500 that the processor would retry for days: kept, with
 * the reason, for an operator (`svc ledger parked`), and reconciliation shows its money.
 */
export interface ProcessorEventParked {
  mode: Mode;
  processor: 'sandbox' | 'stripe';
  /** The processor's event (Stripe evt_...; the sandbox names it by its dispute). */
  processor_event_id: string;
  processor_event_type: string;
  /** The processor's object it is about: a dispute (dp_...) or a charge (ch_...). */
  object_id: string;
  /** The payment it names (Stripe pi_...), when it names one. */
  payment_reference: string | null;
  amount_cents: number | null;
  currency: string | null;
  reason: string;
  parked_at: string;
}

@Injectable()
export class ParkedProcessorEvents {
  private readonly logger = new Logger('ParkedProcessorEvents');

  constructor(
    private readonly writer: EventWriter,
    @Inject(DATABASE) private readonly db: Database,
  ) {}

  /** Every parked event of one mode, oldest first (the parked_processor_events read model). */
  async list(mode: Mode): Promise<ProcessorEventParked[]> {
    const s = inMode(mode);
    const { rows } = await this.db.query<ProcessorEventParked & { amount_cents: string | null; parked_at: Date }>(
      `SELECT mode, processor, processor_event_id, processor_event_type, object_id, payment_reference, amount_cents, currency, reason, parked_at
         FROM parked_processor_events WHERE ${s.where()} ORDER BY parked_at, processor_event_id`,
      s.params,
    );
    return rows.map((r) => ({ ...r, amount_cents: r.amount_cents === null ? null : Number(r.amount_cents), parked_at: new Date(r.parked_at).toISOString() }));
  }

  /** Parks the event once: a redelivery of the same processor event records nothing. */
  async park(event: Omit<ProcessorEventParked, 'parked_at'>): Promise<void> {
    this.logger.warn(`${event.processor_event_id} (${event.processor_event_type}, ${event.object_id}) parked: ${event.reason}`);
    const data: ProcessorEventParked = { ...event, parked_at: new Date().toISOString() };
    try {
      await this.writer.append(Streams.parkedProcessorEvent(event.mode, event.processor_event_id), [{ type: 'ProcessorEventParked', data: { ...data } }], 'no_stream');
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
    }
  }
}
