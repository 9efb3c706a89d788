import { Inject, Injectable, Logger } from '@nestjs/common';
import { DATABASE, Database } from '../database/database';
import { EVENT_STORE, EventStore, START, WrongExpectedRevisionError } from '../event-store/event-store';
import { EntitlementStreams } from './entitlement-streams';
import type { PurchaseCompleted, PurchaseRefunded } from './events';

const DONE = 'backfill:entitlement_streams';
const BATCH = 1000;

/**
 * Purchases recorded before entitlement streams existed (issue 10) hold their asset on no
 * stream, so their buyer could be charged again. Once per database this replays the log and
 * gives every purchase still held its AssetEntitled (no_stream: a stream that exists already
 * is left alone), then records itself as done. Idempotent, so two workers may both run it.
 */
@Injectable()
export class EntitlementBackfill {
  private readonly logger = new Logger('EntitlementBackfill');

  constructor(
    @Inject(DATABASE) private readonly db: Database,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly entitlements: EntitlementStreams,
  ) {}

  async run(): Promise<void> {
    if ((await this.db.query('SELECT 1 FROM schema_migrations WHERE name = $1', [DONE])).rows.length) return;
    const held = new Map<string, PurchaseCompleted>();
    for (let after = START; ; ) {
      const events = await this.store.readAll({ after, limit: BATCH });
      if (!events.length) break;
      for (const event of events) {
        if (event.type === 'PurchaseCompleted') held.set((event.data as PurchaseCompleted).purchase_id, event.data);
        if (event.type === 'PurchaseRefunded') held.delete((event.data as PurchaseRefunded).purchase_id);
      }
      after = events[events.length - 1].position;
    }
    let backfilled = 0;
    for (const p of held.values()) {
      const data = { mode: p.mode, buyer_account_id: p.buyer_account_id, asset_id: p.purchase.asset.id, purchase_id: p.purchase_id, session_id: p.session_id, entitled_at: p.completed_at };
      try {
        await this.entitlements.append({ type: 'AssetEntitled', data }, 'no_stream');
        backfilled++;
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
      }
    }
    await this.db.query('INSERT INTO schema_migrations (name) VALUES ($1) ON CONFLICT DO NOTHING', [DONE]);
    if (backfilled) this.logger.log(`gave ${backfilled} earlier purchases their entitlement stream`);
  }
}
