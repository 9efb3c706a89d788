import type { CheckoutCommand } from './checkout.decider';
import { purchaseOf } from './checkout.decider';
import { CheckoutStreams } from './checkout-streams';
import type { Purchase } from './events';
import { Fulfilment } from './fulfilment';
import type { PurchaseLocation } from './purchase-queries';

type WithoutNow<C> = C extends unknown ? Omit<C, 'now'> : never;

/**
 * Records what the processor did to a purchase's payment (a refund, a part of one, a dispute
 * and its outcome) on the purchase's session stream, decided at the revision it was loaded
 * at, then waits (bounded) for the fulfilment subscriber to record its consequence: the
 * seller's ledger line and, when the purchase ends, the buyer's entitlement.
 */
export async function recordPurchaseFact(
  streams: CheckoutStreams,
  fulfilment: Fulfilment,
  purchase: PurchaseLocation,
  fact: WithoutNow<CheckoutCommand>,
): Promise<Purchase> {
  const { state, position } = await streams.handle(purchase.mode, purchase.session_id, async () => ({ ...fact, now: new Date().toISOString() }) as CheckoutCommand);
  await fulfilment.waitFor(position);
  return purchaseOf(state)!;
}
