import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CatalogQueries } from '../../catalog/catalog-queries';
import { CURRENCY } from '../../catalog/listing';
import type { AuthContext } from '../../platform/auth/auth-context';
import { Errors } from '../../platform/errors';
import { newId } from '../../platform/ids';
import type { Mode } from '../../platform/mode';
import { PAYMENT_PROCESSOR, PaymentProcessor } from '../../payments/payment-processor';
import { CHECKOUT_TTL_MS, checkoutSessionId, toCheckoutSessionObject } from '../checkout';
import { CheckoutStreams } from '../checkout-streams';
import type { CheckoutSessionOpened } from '../events';
import { PurchaseQueries } from '../purchase-queries';

/** decisions section 3: a live premium key's one-time activation fee. */
const ACTIVATION_FEE = { amount_cents: 2000, currency: 'usd' } as const;

export type CheckoutSessionObject = Record<string, unknown> & { id: string; checkout_url: string };

/**
 * Records the session, then asks the processor for its payment page: a payment can only
 * ever be confirmed for a session already on record.
 */
async function openSession(
  streams: CheckoutStreams,
  processor: PaymentProcessor,
  fields: Omit<CheckoutSessionOpened, 'session_id' | 'processor' | 'expires_at' | 'created_at'>,
  description: string,
): Promise<CheckoutSessionObject> {
  const now = new Date();
  const opened: CheckoutSessionOpened = {
    ...fields,
    session_id: checkoutSessionId(fields.mode),
    processor: processor.name,
    expires_at: new Date(now.getTime() + CHECKOUT_TTL_MS).toISOString(),
    created_at: now.toISOString(),
  };
  const state = await streams.open(opened);
  const { checkoutUrl } = await processor.openCheckout({
    mode: opened.mode,
    sessionId: opened.session_id,
    amountCents: opened.amount_cents,
    currency: opened.currency,
    description,
    successUrl: opened.success_url,
    cancelUrl: opened.cancel_url,
    expiresAt: new Date(opened.expires_at),
  });
  return toCheckoutSessionObject(state, checkoutUrl, now) as CheckoutSessionObject;
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

@CommandHandler(OpenPurchaseCheckoutCommand)
export class OpenPurchaseCheckoutHandler implements ICommandHandler<OpenPurchaseCheckoutCommand> {
  constructor(
    private readonly streams: CheckoutStreams,
    private readonly catalog: CatalogQueries,
    private readonly purchases: PurchaseQueries,
    @Inject(PAYMENT_PROCESSOR) private readonly processor: PaymentProcessor,
  ) {}

  async execute({ auth, asset, successUrl, cancelUrl }: OpenPurchaseCheckoutCommand): Promise<CheckoutSessionObject> {
    // Published, in the caller's mode: another mode's asset, or a draft, is not found.
    const listing = await this.catalog.findPublished(auth.mode, undefined, asset);
    if (!listing) throw Errors.notFound('asset');
    if (listing.account_id === auth.accountId) throw Errors.invalidRequest('You cannot buy your own listing; you can already download it.');
    if (listing.price.amount === 0) throw Errors.invalidRequest('This asset is free: download it without a purchase.');
    if (await this.purchases.hasPurchased(auth.mode, auth.accountId, listing.id)) {
      throw Errors.invalidRequest('You have already bought this asset; download it with POST /v1/models/{id}/download.');
    }
    return openSession(
      this.streams,
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
      listing.title,
    );
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

  execute({ accountId, mode, keyId }: OpenKeyActivationCheckoutCommand): Promise<CheckoutSessionObject> {
    return openSession(
      this.streams,
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
      'Premium API key activation',
    );
  }
}
