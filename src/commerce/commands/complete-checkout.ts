import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CatalogQueries } from '../../catalog/catalog-queries';
import { toPublicObject } from '../../catalog/listing';
import type { Mode } from '../../platform/mode';
import type { CheckoutState } from '../checkout';
import { CheckoutStreams } from '../checkout-streams';
import { Fulfilment } from '../fulfilment';

/**
 * The one fulfilment path: the sandbox page and the Stripe webhook both end here once a
 * payment is confirmed. It records the completion on the session's stream (once, however
 * often or concurrently it is confirmed) and waits, bounded, for the fulfilment
 * subscriber to record the sale or the activation.
 */
export class CompleteCheckoutCommand extends Command<CheckoutState> {
  constructor(
    readonly mode: Mode,
    readonly sessionId: string,
    readonly paymentReference: string,
    readonly refuseExpired: boolean,
  ) {
    super();
  }
}

@CommandHandler(CompleteCheckoutCommand)
export class CompleteCheckoutHandler implements ICommandHandler<CompleteCheckoutCommand> {
  constructor(
    private readonly streams: CheckoutStreams,
    private readonly catalog: CatalogQueries,
    private readonly fulfilment: Fulfilment,
  ) {}

  async execute({ mode, sessionId, paymentReference, refuseExpired }: CompleteCheckoutCommand): Promise<CheckoutState> {
    const { state, position } = await this.streams.handle(mode, sessionId, async (current) => {
      const { seller_account_id, asset } = current.opened;
      // The listing as the buyer got it, for listing.purchased; it may be unpublished since.
      const listing = seller_account_id && asset ? await this.catalog.findOwn(mode, seller_account_id, asset.id) : undefined;
      return {
        type: 'Complete',
        now: new Date().toISOString(),
        payment_reference: paymentReference,
        listing: listing ? toPublicObject(listing) : null,
        refuseExpired,
      };
    });
    if (position) await this.fulfilment.waitFor(position);
    return state;
  }
}
