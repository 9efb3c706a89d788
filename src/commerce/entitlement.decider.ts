/**
 * A buyer's entitlement to one asset in one mode, as a pure decider over its stream
 * `entitlement-<mode>-<buyer>-<asset>`. It is the boundary for "one purchase per buyer,
 * asset and mode" (decisions section 3): opening a checkout and completing one both
 * decide here and append at the revision they loaded, so two sessions opened or paid at
 * once cannot both become purchases.
 */
import type { Decider } from '../event-store/stream-commands';
import { Errors } from '../platform/errors';
import type { Mode } from '../platform/mode';

export interface EntitlementKey {
  mode: Mode;
  buyer_account_id: string;
  asset_id: string;
}

/** A checkout session for the asset was opened; it is the buyer's open one until it completes or expires. */
export interface AssetCheckoutOpened extends EntitlementKey {
  session_id: string;
  opened_at: string;
}

/** A session's payment made its purchase the buyer's: recorded before the session's PurchaseCompleted. */
export interface AssetEntitled extends EntitlementKey {
  purchase_id: string;
  session_id: string;
  entitled_at: string;
}

/** The purchase was refunded or lost to a dispute: the buyer may buy the asset again. */
export interface AssetEntitlementEnded extends EntitlementKey {
  purchase_id: string;
  ended_at: string;
}

export type EntitlementEvent =
  | { type: 'AssetCheckoutOpened'; data: AssetCheckoutOpened }
  | { type: 'AssetEntitled'; data: AssetEntitled }
  | { type: 'AssetEntitlementEnded'; data: AssetEntitlementEnded };

export interface EntitlementState {
  /** The last session opened for the asset; whether it is still payable is its own stream's say. */
  lastSessionId: string | null;
  /** The purchase that holds the asset now. */
  owner: { purchase_id: string; session_id: string } | null;
}

export const noEntitlement = (): EntitlementState => ({ lastSessionId: null, owner: null });

export function evolve(state: EntitlementState, event: EntitlementEvent): EntitlementState {
  switch (event.type) {
    case 'AssetCheckoutOpened':
      return { ...state, lastSessionId: event.data.session_id };
    case 'AssetEntitled':
      return { ...state, owner: { purchase_id: event.data.purchase_id, session_id: event.data.session_id } };
    case 'AssetEntitlementEnded':
      return state.owner?.purchase_id === event.data.purchase_id ? { ...state, owner: null } : state;
  }
}

export function fold(events: readonly EntitlementEvent[]): EntitlementState {
  return events.reduce(evolve, noEntitlement());
}

export type EntitlementCommand =
  /** Name a session as the buyer's open one for the asset (the one named already: nothing to record). */
  | { type: 'NameCheckout'; key: EntitlementKey; session_id: string; opened_at: string }
  /** Make a paid session's purchase the buyer's; a purchase holding the asset already keeps it. */
  | { type: 'Entitle'; key: EntitlementKey; purchase_id: string; session_id: string; entitled_at: string }
  /** End the holding of a refunded purchase (or one lost to a dispute). */
  | { type: 'End'; key: EntitlementKey; purchase_id: string; ended_at: string };

export const EntitlementErrors = {
  alreadyBought: () => Errors.invalidRequest('You have already bought this asset; download it with POST /v1/models/{id}/download.'),
} as const;

export function decide(command: EntitlementCommand, state: EntitlementState): EntitlementEvent[] {
  switch (command.type) {
    case 'NameCheckout':
      if (state.owner) throw EntitlementErrors.alreadyBought();
      if (state.lastSessionId === command.session_id) return [];
      return [{ type: 'AssetCheckoutOpened', data: { ...command.key, session_id: command.session_id, opened_at: command.opened_at } }];
    case 'Entitle':
      // Held already: by this session (an earlier attempt that then lost its race on the session's stream), or by another purchase.
      if (state.owner) return [];
      return [{ type: 'AssetEntitled', data: { ...command.key, purchase_id: command.purchase_id, session_id: command.session_id, entitled_at: command.entitled_at } }];
    case 'End':
      // A repeat (the subscriber replaying) records nothing.
      if (state.owner?.purchase_id !== command.purchase_id) return [];
      return [{ type: 'AssetEntitlementEnded', data: { ...command.key, purchase_id: command.purchase_id, ended_at: command.ended_at } }];
  }
}

export const entitlementDecider: Decider<EntitlementCommand, EntitlementEvent, EntitlementState> = { initialState: noEntitlement, evolve, decide };
