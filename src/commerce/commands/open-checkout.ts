import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CURRENCY } from '../../catalog/listing';
import { ListingStore } from '../../catalog/listing-store';
import type { AuthContext } from '../../platform/auth/auth-context';
import { Errors } from '../../platform/errors';
import { newId } from '../../platform/ids';
import type { Mode } from '../../platform/mode';
import { PAYMENT_PROCESSOR, PaymentProcessor } from '../../payments/payment-processor';
import { CHECKOUT_TTL_MS, checkoutSessionId, CheckoutState, statusOf, toCheckoutSessionObject } from '../checkout.decider';
import { CheckoutStreams } from '../checkout-streams';
import { EntitlementStreams } from '../entitlement-streams';
import { EntitlementErrors } from '../entitlement.decider';
import type { CheckoutSessionOpened } from '../events';

/** decisions section 3: a live premium key's one-time activation fee. */
const ACTIVATION_FEE = { amount_cents: 2000, currency: 'usd' } as const;

export type CheckoutSessionObject = Record<string, unknown> & { id: string; checkout_url: string };

/**
 * The session's payment page, asked of the processor under the session's own id (its
 * idempotency key): asked again for a session already open, it answers with the same page.
 */
async function present(processor: PaymentProcessor, state: CheckoutState, now: Date): Promise<CheckoutSessionObject> {
  const s = state.opened;
  const { checkoutUrl } = await processor.openCheckout({
    mode: s.mode,
    sessionId: s.session_id,
    amountCents: s.amount_cents,
    currency: s.currency,
    description: s.asset ? s.asset.title : 'Premium API key activation',
    successUrl: s.success_url,
    cancelUrl: s.cancel_url,
    expiresAt: new Date(s.expires_at),
  });
  return toCheckoutSessionObject(state, checkoutUrl, now) as CheckoutSessionObject;
}

/** A new session's opening fact; recorded before the processor is asked for its page, so a payment can only be confirmed for a session on record. */
function opening(
  processor: PaymentProcessor,
  fields: Omit<CheckoutSessionOpened, 'session_id' | 'processor' | 'expires_at' | 'created_at'>,
  now: Date,
): CheckoutSessionOpened {
  return {
    ...fields,
    session_id: checkoutSessionId(fields.mode),
    processor: processor.name,
    expires_at: new Date(now.getTime() + CHECKOUT_TTL_MS).toISOString(),
    created_at: now.toISOString(),
  };
}

/** POST /v1/purchases: a checkout session for a paid, published asset of another account. */
export class OpenPurchaseCheckoutCommand extends Command<CheckoutSessionObject> {
  constructor(
    readonly auth: AuthContext,
    readonly asset: string,
    readonly successUrl: string | null,
    readonly cancelUrl: string | null,
  ) {
    super();
  }
}

/**
 * Decides on streams only: the listing's, and the buyer's entitlement stream for the
 * asset, which says whether the buyer holds it and which session was opened last. While
 * that session is payable it is the answer (as it was opened, with its own success and
 * cancel URLs); otherwise a new one is opened and named on the entitlement stream at the
 * revision loaded, so of two opens racing, the loser retries and returns the winner's.
 */
@CommandHandler(OpenPurchaseCheckoutCommand)
export class OpenPurchaseCheckoutHandler implements ICommandHandler<OpenPurchaseCheckoutCommand> {
  constructor(
    private readonly streams: CheckoutStreams,
    private readonly entitlements: EntitlementStreams,
    private readonly listings: ListingStore,
    @Inject(PAYMENT_PROCESSOR) private readonly processor: PaymentProcessor,
  ) {}

  async execute({ auth, asset, successUrl, cancelUrl }: OpenPurchaseCheckoutCommand): Promise<CheckoutSessionObject> {
    // Published, in the caller's mode: another mode's asset, or a draft, is not found.
    const listing = (await this.listings.findPublished(auth.mode, asset))?.state;
    if (!listing) throw Errors.notFound('asset');
    if (listing.account_id === auth.accountId) throw Errors.invalidRequest('You cannot buy your own listing; you can already download it.');
    if (listing.price.amount === 0) throw Errors.invalidRequest('This asset is free: download it without a purchase.');
    const key = { mode: auth.mode, buyer_account_id: auth.accountId, asset_id: listing.id };
    // The session to show, once it is named on the entitlement stream; the processor is asked for its page after.
    let shown: { state: CheckoutState; now: Date } | undefined;
    await this.entitlements.handle(key, async (entitlement) => {
      const now = new Date();
      if (entitlement.owner) throw EntitlementErrors.alreadyBought();
      const last = entitlement.lastSessionId && (await this.streams.load(auth.mode, entitlement.lastSessionId));
      if (last && statusOf(last, now) === 'requires_payment') {
        shown = { state: last, now };
        return { type: 'NameCheckout', key, session_id: last.opened.session_id, opened_at: last.opened.created_at };
      }
      const opened = opening(
        this.processor,
        {
          mode: auth.mode,
          purpose: 'purchase',
          buyer_account_id: auth.accountId,
          amount_cents: listing.price.amount,
          currency: listing.price.currency || CURRENCY,
          asset: { id: listing.id, slug: listing.slug, title: listing.title },
          seller_account_id: listing.account_id,
          purchase_id: newId('pur'),
          key_id: null,
          success_url: successUrl,
          cancel_url: cancelUrl,
        },
        now,
      );
      // The session first, then its name on the entitlement stream: whoever reads the name
      // finds the session. A session whose naming loses the race is never shown to anyone.
      shown = { state: await this.streams.open(opened), now };
      return { type: 'NameCheckout', key, session_id: opened.session_id, opened_at: opened.created_at };
    });
    return present(this.processor, shown!.state, shown!.now);
  }
}

/** The activation checkout of a live premium key (created inactive). */
export class OpenKeyActivationCheckoutCommand extends Command<CheckoutSessionObject> {
  constructor(readonly accountId: string, readonly mode: Mode, readonly keyId: string) {
    super();
  }
}

@CommandHandler(OpenKeyActivationCheckoutCommand)
export class OpenKeyActivationCheckoutHandler implements ICommandHandler<OpenKeyActivationCheckoutCommand> {
  constructor(
    private readonly streams: CheckoutStreams,
    @Inject(PAYMENT_PROCESSOR) private readonly processor: PaymentProcessor,
  ) {}

  async execute({ accountId, mode, keyId }: OpenKeyActivationCheckoutCommand): Promise<CheckoutSessionObject> {
    const now = new Date();
    const opened = opening(
      this.processor,
      {
        mode,
        purpose: 'key_activation',
        buyer_account_id: accountId,
        amount_cents: ACTIVATION_FEE.amount_cents,
        currency: ACTIVATION_FEE.currency,
        asset: null,
        seller_account_id: null,
        purchase_id: null,
        key_id: keyId,
        success_url: null,
        cancel_url: null,
      },
      now,
    );
    return present(this.processor, await this.streams.open(opened), now);
  }
}
