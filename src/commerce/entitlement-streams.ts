import { Inject, Injectable } from '@nestjs/common';
import { EVENT_STORE, EventStore, ExpectedRevision } from '../event-store/event-store';
import type { Mode } from '../platform/mode';
import { Streams } from '../platform/streams';
import { EventWriter } from '../projection-runner/event-writer';
import { EntitlementEvent, EntitlementState, fold } from './entitlement';
import type { CheckoutSessionOpened } from './events';

export interface LoadedEntitlement {
  state: EntitlementState;
  /** What the next append expects. */
  expected: ExpectedRevision;
}

/** The one way commerce touches entitlement streams: load, then append at the loaded revision. */
@Injectable()
export class EntitlementStreams {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly writer: EventWriter,
  ) {}

  async load(mode: Mode, buyerAccountId: string, assetId: string): Promise<LoadedEntitlement> {
    const history = await this.store.readStream(Streams.entitlement(mode, buyerAccountId, assetId));
    return {
      state: fold(history.map((e) => ({ type: e.type, data: e.data }) as EntitlementEvent)),
      expected: history.length ? history[history.length - 1].revision : 'no_stream',
    };
  }

  /**
   * Throws WrongExpectedRevisionError when the stream moved since it was loaded. No read
   * model reads entitlement streams, so there is nothing to wait for after the append.
   */
  async append(event: EntitlementEvent, expected: ExpectedRevision): Promise<void> {
    const { mode, buyer_account_id, asset_id } = event.data;
    await this.store.append(Streams.entitlement(mode, buyer_account_id, asset_id), [{ type: event.type, data: { ...event.data } }], expected);
  }

  /**
   * Makes the session's purchase the buyer's, unless another purchase holds the asset:
   * returns that purchase's id, or null when the asset is (now) this session's.
   */
  async claim(session: CheckoutSessionOpened, now: string): Promise<string | null> {
    const key = { mode: session.mode, buyer_account_id: session.buyer_account_id, asset_id: session.asset!.id };
    const { state, expected } = await this.load(key.mode, key.buyer_account_id, key.asset_id);
    // Ours already: an earlier attempt claimed it and then lost its race on the session's stream.
    if (state.owner) return state.owner.session_id === session.session_id ? null : state.owner.purchase_id;
    await this.append({ type: 'AssetEntitled', data: { ...key, purchase_id: session.purchase_id!, session_id: session.session_id, entitled_at: now } }, expected);
    return null;
  }

  /** Ends the holding of a refunded purchase (or one lost to a dispute); a repeat (the subscriber replaying) records nothing. */
  end(session: CheckoutSessionOpened, purchaseId: string, now: string): Promise<void> {
    const key = { mode: session.mode, buyer_account_id: session.buyer_account_id, asset_id: session.asset!.id };
    return this.retryOnConflict(async () => {
      const { state, expected } = await this.load(key.mode, key.buyer_account_id, key.asset_id);
      if (state.owner?.purchase_id !== purchaseId) return;
      await this.append({ type: 'AssetEntitlementEnded', data: { ...key, purchase_id: purchaseId, ended_at: now } }, expected);
    });
  }

  retryOnConflict<T>(attempt: () => Promise<T>): Promise<T> {
    return this.writer.retryOnConflict(attempt);
  }
}
