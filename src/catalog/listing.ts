import type { RecordedEvent } from '../event-store/event-store';
import { ApiError, Errors } from '../platform/errors';
import { evolve as evolveListing, ListingEvent, ListingState, toPublicObject } from './listing.decider';

/**
 * The listing as the API and other contexts see it: its objects, its price rule and the
 * fold of a stored listing stream. Its rules and its fold are listing.decider.ts's.
 */
export type { ListingState, ListingStatus } from './listing.decider';
export { toPublicObject } from './listing.decider';

export const DATASET_TYPES = ['dataset', 'telemetry', 'calibration'] as const;
export const CURRENCY = 'usd';
export const MIN_PAID_PRICE = 100;

/** The decider's evolve over stored events (the catalog_listings read model folds with it). */
export function evolve(state: ListingState | undefined, event: Pick<RecordedEvent, 'type' | 'data'>): ListingState | undefined {
  // The stream holds listing events only: their types and data are the union's.
  return evolveListing(state, event as ListingEvent);
}

/** The seller's view (listings endpoints): the public object plus state and where the file lives. */
export function toListingObject(s: ListingState): Record<string, unknown> {
  return {
    ...toPublicObject(s),
    object: 'listing',
    kind: s.kind,
    status: s.status,
    validation_status: s.validation_status,
    validation_errors: s.validation_errors ?? [],
    storage_path: s.file?.storage_path ?? null,
    published_at: s.published_at,
  };
}

/** Spec part 4 rule 1: 0 is free; a paid price is at least 100 cents. */
export function assertValidPrice(cents: number): void {
  if (cents >= 1 && cents < MIN_PAID_PRICE) {
    throw new ApiError(400, 'price_too_low', `price_cents must be 0 (free) or at least ${MIN_PAID_PRICE}; got ${cents}.`);
  }
  if (!Number.isSafeInteger(cents) || cents < 0) throw Errors.validationFailed('Invalid field "price_cents": must be a whole number of cents, 0 or more.');
}
