import { Injectable } from '@nestjs/common';
import { StreamCommands } from '../event-store/stream-commands';
import { Streams } from '../platform/streams';
import { EventWriter } from '../projection-runner/event-writer';
import { EntitlementCommand, EntitlementEvent, EntitlementKey, EntitlementState, entitlementDecider } from './entitlement.decider';
import type { CheckoutSessionOpened } from './events';

/** The one way commerce touches entitlement streams: the entitlement decider, on the buyer's stream for the asset. */
@Injectable()
export class EntitlementStreams {
  private readonly commands: StreamCommands<EntitlementCommand, EntitlementEvent, EntitlementState>;

  constructor(writer: EventWriter) {
    this.commands = writer.commands(entitlementDecider);
  }

  /**
   * Decides `command(state)` on the key's stream (a lost race decides again on the newer
   * state) and returns the state after it.
   */
  async handle(key: EntitlementKey, command: (state: EntitlementState) => EntitlementCommand | Promise<EntitlementCommand>): Promise<EntitlementState> {
    return (await this.commands.handle(streamOf(key), command)).state;
  }

  /**
   * Makes the session's purchase the buyer's, unless another purchase holds the asset:
   * returns that purchase's id, or null when the asset is (now) this session's.
   */
  async claim(session: CheckoutSessionOpened, now: string): Promise<string | null> {
    const key = keyOf(session);
    const { owner } = await this.handle(key, () => ({ type: 'Entitle', key, purchase_id: session.purchase_id!, session_id: session.session_id, entitled_at: now }));
    return owner!.session_id === session.session_id ? null : owner!.purchase_id;
  }

  /** Ends the holding of a refunded purchase (or one lost to a dispute); a repeat records nothing. */
  async end(session: CheckoutSessionOpened, purchaseId: string, now: string): Promise<void> {
    const key = keyOf(session);
    await this.handle(key, () => ({ type: 'End', key, purchase_id: purchaseId, ended_at: now }));
  }
}

function keyOf(session: CheckoutSessionOpened): EntitlementKey {
  return { mode: session.mode, buyer_account_id: session.buyer_account_id, asset_id: session.asset!.id };
}

function streamOf(key: EntitlementKey): string {
  return Streams.entitlement(key.mode, key.buyer_account_id, key.asset_id);
}
