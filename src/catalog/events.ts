import type { Inspection } from '../inspection/inspection';
import type { Mode } from '../platform/mode';

/** Facts of the catalog context, all on the stream listing-<mode>-<listing_id>. */
export type ListingKind = 'model' | 'dataset';

export interface Price {
  amount: number;
  currency: string;
}

export interface ListingFile {
  name: string;
  size: number;
  /** With the leading dot, as the upload grant returns it. */
  extension: string;
  storage_path: string;
}

/** What a seller chooses about a listing; every field can change before and after publication. */
export interface ListingDetails {
  title: string;
  description: string;
  type: string;
  category: string;
  license: string;
  version: string;
  price: Price;
  tags: string[];
  frameworks: string[];
  hardware: string[];
  sensors: string[];
  ros_compatible: boolean;
  jetson_compatible: boolean;
  isaac_sim_compatible: boolean;
  /** The artifact of a model; datasets keep their data in shards instead. */
  file: ListingFile | null;
  /** The model card, Markdown of at most 64 KiB (issue 40); absent on listings drafted before it. */
  readme?: string;
}

/** On listingslug-<mode>-<slug>: the slug is taken by this listing (which a failed draft may never have created). */
export interface ListingSlugClaimed {
  slug: string;
  listing_id: string;
  mode: Mode;
}

export interface ListingDrafted {
  listing_id: string;
  account_id: string;
  mode: Mode;
  kind: ListingKind;
  slug: string;
  author: { slug: string; name: string };
  details: ListingDetails;
  created_at: string;
}

export interface ListingUpdated {
  listing_id: string;
  account_id: string;
  mode: Mode;
  changes: Partial<ListingDetails>;
  updated_at: string;
}

/**
 * A file as buyers get it: copied at publish to its content-addressed key `path`
 * (published/<sha256>), which no upload URL can write. `name` is a model's file name or a
 * dataset's shard name.
 */
export interface PublishedFile {
  name: string;
  size: number;
  sha256: string;
  path: string;
  /** What inspection found in the frozen copy (issue 40); absent on files published before it. */
  inspection?: Inspection;
}

/**
 * The first rows of a dataset's first tabular file (by name), as ListingPublished stores
 * them and GET /v1/datasets/{id}/preview serves them (decision 0071). Read once, when the
 * files are inspected at publish, so a preview never reads storage.
 */
export interface DatasetSample {
  file: string | null;
  format: 'parquet' | 'csv' | 'jsonl' | null;
  columns: string[];
  rows: Record<string, unknown>[];
  /** Rows the file holds when known (Parquet's footer). */
  total_rows: number | null;
  /** True when rows or columns were left out to stay within 256 KiB (dataset-preview.ts). */
  truncated: boolean;
  notes: string[];
}

/**
 * `listing` is the public object exactly as GET returned it at that moment (webhook payload).
 * `files` is what buyers are served from then on: a model's one file, a dataset's shards. It
 * is fixed at the first publish and repeated by later ones; events from before it existed
 * have none, and such listings are served from their upload paths.
 */
export interface ListingPublished {
  listing_id: string;
  account_id: string;
  mode: Mode;
  listing: Record<string, unknown>;
  files?: PublishedFile[];
  /**
   * A dataset's preview sample (issue 41, decision 0071): the first rows of its first tabular
   * file, read when its files were inspected. Absent on models, on repeated publishes (the
   * first one's is kept) and on events from before previews.
   */
  sample?: DatasetSample;
  published_at: string;
}

export interface ListingUnpublished {
  listing_id: string;
  account_id: string;
  mode: Mode;
  listing: Record<string, unknown>;
  unpublished_at: string;
}

/** A publish of the listing failed its checks (decisions section 5): why, until a later publish passes. */
export interface ListingValidationFailed {
  listing_id: string;
  account_id: string;
  mode: Mode;
  errors: ValidationProblem[];
  failed_at: string;
  /**
   * Decided by the inspection worker after the publish answered (issue 40): the seller learns
   * of it by the listing.validation_failed webhook, whose payload `listing` is (the public
   * object at that moment). Absent on failures the publish request itself answered with a 400.
   */
  background?: true;
  listing?: Record<string, unknown>;
}

/**
 * A publish whose files include one larger than the inline inspection limit (issue 40,
 * INSPECTION_INLINE_MAX_BYTES): its files are frozen, those within the limit inspected, and
 * the inspection worker inspects the rest, then records ListingPublished or
 * ListingValidationFailed. Until then the listing is validation_status pending and not
 * readable by buyers. `requested_at` names this request: a later publish makes another.
 */
export interface ListingInspectionRequested {
  listing_id: string;
  account_id: string;
  mode: Mode;
  files: PublishedFile[];
  requested_at: string;
}

/** One reason a publish was refused, as its 4xx error said it. */
export interface ValidationProblem {
  code: string;
  message: string;
}

/** account_id is the seller, who receives asset.downloaded. */
export interface AssetDownloaded {
  listing_id: string;
  account_id: string;
  buyer_account_id: string;
  mode: Mode;
  asset: { id: string; slug: string; title: string; type: string };
  downloaded_at: string;
}

/**
 * On datasetdownload-<mode>-<listing>-<buyer>-<UTC day>, appended with no_stream: the first
 * shard a buyer fetches of a dataset in a day counts that day's download, once.
 */
export interface DatasetDownloadCounted {
  listing_id: string;
  buyer_account_id: string;
  mode: Mode;
  day: string;
  counted_at: string;
}

export const CatalogEvents = {
  /** On listingslug-<mode>-<slug>, not on the listing stream: takes a slug once per mode. */
  ListingSlugClaimed: 'ListingSlugClaimed',
  DatasetDownloadCounted: 'DatasetDownloadCounted',
  ListingDrafted: 'ListingDrafted',
  ListingUpdated: 'ListingUpdated',
  ListingPublished: 'ListingPublished',
  ListingUnpublished: 'ListingUnpublished',
  ListingValidationFailed: 'ListingValidationFailed',
  ListingInspectionRequested: 'ListingInspectionRequested',
  AssetDownloaded: 'AssetDownloaded',
} as const;

/** The events on a listing stream (what the catalog_listings projection reads). */
export const LISTING_EVENT_TYPES: readonly string[] = [
  CatalogEvents.ListingDrafted,
  CatalogEvents.ListingUpdated,
  CatalogEvents.ListingPublished,
  CatalogEvents.ListingUnpublished,
  CatalogEvents.ListingValidationFailed,
  CatalogEvents.ListingInspectionRequested,
  CatalogEvents.AssetDownloaded,
];
