import { Inject, Injectable } from '@nestjs/common';
import type { PurchaseLookup } from '../catalog/entitlement';
import { EVENT_STORE, EventStore, RecordedEvent } from '../event-store/event-store';
import type { Mode } from '../platform/mode';
import { Streams } from '../platform/streams';
import { completedPurchaseOf, fold as foldCheckout } from './checkout.decider';
import { EntitlementEvent, fold as foldEntitlement } from './entitlement.decider';
import type { CheckoutEvent } from './events';

const as = <E>(events: RecordedEvent[]) => events.map((e) => ({ type: e.type, data: e.data }) as E);

/**
 * The catalog's download check, decided on streams: a download is recorded as an event, so
 * a lagging purchases read model must not refuse a buyer who just paid nor serve one just
 * refunded. The buyer's entitlement stream names the purchase that holds the asset; that
 * purchase's session stream says whether it is still paid (a refund ends the entitlement
 * only a moment later, through fulfilment).
 */
@Injectable()
export class EntitlementLookup implements PurchaseLookup {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  async hasPurchased(mode: Mode, buyerAccountId: string, listingId: string): Promise<boolean> {
    const history = await this.store.readStream(Streams.entitlement(mode, buyerAccountId, listingId));
    const { owner } = foldEntitlement(as<EntitlementEvent>(history));
    if (!owner) return false;
    const session = foldCheckout(as<CheckoutEvent>(await this.store.readStream(Streams.checkout(mode, owner.session_id))));
    return !!session && !session.refunded && completedPurchaseOf(session)?.purchase_id === owner.purchase_id;
  }
}
