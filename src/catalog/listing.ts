import type { Mode } from '../platform/mode';
import { ApiError, Errors } from '../platform/errors';
import {
  CatalogEvents,
  ListingDetails,
  ListingDrafted,
  ListingKind,
  ListingPublished,
  ListingUnpublished,
  ListingUpdated,
  ListingValidationFailed,
  PublishedFile,
  ValidationProblem,
} from './events';

export type ListingStatus = 'draft' | 'published' | 'unpublished';

/**
 * A listing folded from its stream. Command handlers fold it to decide, and the read
 * model stores the same fold, so the API and the events never disagree on a field.
 */
export interface ListingState extends ListingDetails {
  id: string;
  mode: Mode;
  account_id: string;
  kind: ListingKind;
  slug: string;
  author: { slug: string; name: string };
  status: ListingStatus;
  /** decisions section 5: pending until a publish tried it; failed (with why) until a publish passes. */
  validation_status: 'pending' | 'passed' | 'failed';
  /** Why the last publish failed; [] otherwise. Absent on states folded before it was kept. */
  validation_errors?: ValidationProblem[];
  downloads: number;
  featured: boolean;
  created_at: string;
  updated_at: string;
  published_at: string | null;
  /** Frozen at the first publish (ListingPublished.files); null before it, and for listings published before files were recorded. */
  published_files: PublishedFile[] | null;
}

export const DATASET_TYPES = ['dataset', 'telemetry', 'calibration'] as const;
export const CURRENCY = 'usd';
export const MIN_PAID_PRICE = 100;

export function evolve(state: ListingState | undefined, event: { type: string; data: unknown }): ListingState | undefined {
  switch (event.type) {
    case CatalogEvents.ListingDrafted: {
      const e = event.data as ListingDrafted;
      return {
        ...e.details,
        id: e.listing_id,
        mode: e.mode,
        account_id: e.account_id,
        kind: e.kind,
        slug: e.slug,
        author: e.author,
        status: 'draft',
        validation_status: 'pending',
        validation_errors: [],
        downloads: 0,
        featured: false,
        created_at: e.created_at,
        updated_at: e.created_at,
        published_at: null,
        published_files: null,
      };
    }
    case CatalogEvents.ListingUpdated: {
      const e = event.data as ListingUpdated;
      return state && { ...state, ...e.changes, updated_at: e.updated_at };
    }
    case CatalogEvents.ListingPublished: {
      const e = event.data as ListingPublished;
      return (
        state && {
          ...state,
          status: 'published',
          validation_status: 'passed',
          validation_errors: [],
          published_at: e.published_at,
          updated_at: e.published_at,
          published_files: e.files ?? state.published_files,
        }
      );
    }
    case CatalogEvents.ListingUnpublished: {
      const e = event.data as ListingUnpublished;
      return state && { ...state, status: 'unpublished', updated_at: e.unpublished_at };
    }
    case CatalogEvents.ListingValidationFailed: {
      const e = event.data as ListingValidationFailed;
      return state && { ...state, validation_status: 'failed', validation_errors: e.errors };
    }
    case CatalogEvents.AssetDownloaded:
      return state && { ...state, downloads: state.downloads + 1 };
    default:
      return state;
  }
}

/** The model (or dataset) object of spec part 2, as the public read endpoints return it. */
export function toPublicObject(s: ListingState): Record<string, unknown> {
  return {
    id: s.id,
    slug: s.slug,
    title: s.title,
    description: s.description,
    type: s.type,
    category: s.category,
    license: s.license,
    version: s.version,
    price: { ...s.price },
    tags: [...s.tags],
    frameworks: [...s.frameworks],
    hardware: [...s.hardware],
    sensors: [...s.sensors],
    ros_compatible: s.ros_compatible,
    jetson_compatible: s.jetson_compatible,
    isaac_sim_compatible: s.isaac_sim_compatible,
    file: s.file && { name: s.file.name, size: s.file.size, extension: s.file.extension, sha256: s.published_files?.[0]?.sha256 ?? null },
    downloads: s.downloads,
    featured: s.featured,
    author: { ...s.author },
    created_at: s.created_at,
    updated_at: s.updated_at,
  };
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
