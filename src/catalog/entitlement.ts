import { Inject, Injectable } from '@nestjs/common';
import type { AuthContext } from '../platform/auth/auth-context';
import { ApiError } from '../platform/errors';
import type { Mode } from '../platform/mode';
import type { ListingState } from './listing';

/** Who bought what, per mode: the commerce context's purchases read model. */
export interface PurchaseLookup {
  hasPurchased(mode: Mode, buyerAccountId: string, listingId: string): Promise<boolean>;
}

export const PURCHASE_LOOKUP = Symbol('PurchaseLookup');

/** The one download entitlement rule (decisions section 5). */
@Injectable()
export class Entitlements {
  constructor(@Inject(PURCHASE_LOOKUP) private readonly purchases: PurchaseLookup) {}

  /** Free, the caller's own, or bought in the same mode; nothing crosses modes. */
  async isEntitled(auth: AuthContext, listing: ListingState): Promise<boolean> {
    if (listing.mode !== auth.mode) return false;
    if (listing.price.amount === 0 || listing.account_id === auth.accountId) return true;
    return this.purchases.hasPurchased(auth.mode, auth.accountId, listing.id);
  }

  /**
   * Whether the caller may see a listing's files at all: a published listing, their own in
   * any state, or one they bought and still hold. Purchase history outlives an unpublish
   * (spec section 3), so a buyer keeps what they paid for; everyone else gets 404.
   */
  async isReachable(auth: AuthContext, listing: Pick<ListingState, 'id' | 'mode' | 'status' | 'account_id'>): Promise<boolean> {
    if (listing.mode !== auth.mode) return false;
    if (listing.status === 'published' || listing.account_id === auth.accountId) return true;
    return this.purchases.hasPurchased(auth.mode, auth.accountId, listing.id);
  }

  async assertEntitled(auth: AuthContext, listing: ListingState): Promise<void> {
    if (await this.isEntitled(auth, listing)) return;
    throw new ApiError(
      402,
      'purchase_required',
      `"${listing.title}" costs ${listing.price.amount} ${listing.price.currency} cents; buy it with POST /v1/purchases first.`,
      { price: { amount: listing.price.amount, currency: listing.price.currency }, asset: { id: listing.id, slug: listing.slug } },
    );
  }
}
