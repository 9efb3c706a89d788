/**
 * A listing as a pure decider (initialState / evolve / decide): no I/O, no clock, no ids;
 * commands carry `now` and whatever the I/O found (the files frozen for a publish, the
 * slug claimed for a draft). StreamCommands runs it on the stream listing-<mode>-<id>;
 * the catalog_listings read model folds the same evolve, so the API and the events never
 * disagree on a field.
 */
import type { Decider } from '../event-store/stream-commands';
import { capped } from '../inspection/inspection';
import { datasetLayout } from '../inspection/layout';
import { Errors } from '../platform/errors';
import type { Mode } from '../platform/mode';
import type {
  AssetDownloaded,
  ListingDetails,
  ListingDrafted,
  ListingInspectionRequested,
  ListingKind,
  ListingPublished,
  ListingUnpublished,
  ListingUpdated,
  ListingValidationFailed,
  PublishedFile,
  ValidationProblem,
} from './events';
import type { DatasetSample } from './dataset-preview';

export type ListingStatus = 'draft' | 'published' | 'unpublished';

/** A listing folded from its stream: what commands decide on and what catalog_listings stores. */
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
  /** A background inspection under way (ListingInspectionRequested), until its outcome is recorded; absent on states folded before it existed. */
  pending_inspection?: { requested_at: string } | null;
  /** A dataset's preview sample (ListingPublished.sample); absent before its first publish and on listings published before previews. Left out of list reads. */
  preview_sample?: DatasetSample | null;
}

/** The events of a listing stream (LISTING_EVENT_TYPES), with their data as stored. */
export type ListingEvent =
  | { type: 'ListingDrafted'; data: ListingDrafted }
  | { type: 'ListingUpdated'; data: ListingUpdated }
  | { type: 'ListingPublished'; data: ListingPublished }
  | { type: 'ListingUnpublished'; data: ListingUnpublished }
  | { type: 'ListingValidationFailed'; data: ListingValidationFailed }
  | { type: 'ListingInspectionRequested'; data: ListingInspectionRequested }
  | { type: 'AssetDownloaded'; data: AssetDownloaded };

/** undefined until the stream's ListingDrafted. */
export type ListingStreamState = ListingState | undefined;

export type ListingCommand =
  /**
   * A new listing (its slug already claimed), published at once when `publish` holds the files
   * it froze; with `background`, some of them wait for the inspection worker instead.
   */
  | { type: 'Draft'; drafted: ListingDrafted; publish: PublishedFile[] | null; background?: boolean }
  | { type: 'Update'; account_id: string; changes: Partial<ListingDetails>; now: string }
  /** The files the publication froze (preparePublication); for a listing published before, nothing is recorded. */
  | { type: 'Publish'; account_id: string; files: PublishedFile[]; now: string; background?: boolean; sample?: DatasetSample }
  /**
   * The inspection worker's outcome for the request made at `requested_at`: the files with
   * their inspections (published), or why they failed. Stale (a later request, or decided already): nothing.
   */
  | { type: 'CompleteInspection'; requested_at: string; files: PublishedFile[]; problems: ValidationProblem[]; now: string; sample?: DatasetSample }
  /** A publish its checks refused: why, shown on the listing until a publish passes. */
  | { type: 'RecordPublishFailure'; account_id: string; problems: ValidationProblem[]; now: string }
  | { type: 'Unpublish'; account_id: string; now: string }
  /** A download granted to `buyer_account_id` (the seller's own fetch is not one). */
  | { type: 'RecordDownload'; buyer_account_id: string; now: string };

export function initialState(): ListingStreamState {
  return undefined;
}

export function evolve(state: ListingStreamState, event: ListingEvent): ListingStreamState {
  switch (event.type) {
    case 'ListingDrafted': {
      const e = event.data;
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
    case 'ListingUpdated': {
      const e = event.data;
      return state && { ...state, ...e.changes, updated_at: e.updated_at };
    }
    case 'ListingPublished': {
      const e = event.data;
      return (
        state && {
          ...state,
          status: 'published',
          validation_status: 'passed',
          validation_errors: [],
          published_at: e.published_at,
          updated_at: e.published_at,
          published_files: e.files ?? state.published_files,
          pending_inspection: null,
          ...((e.sample ?? state.preview_sample) && { preview_sample: e.sample ?? state.preview_sample }),
        }
      );
    }
    case 'ListingUnpublished':
      return state && { ...state, status: 'unpublished', updated_at: event.data.unpublished_at };
    case 'ListingValidationFailed':
      return state && { ...state, validation_status: 'failed', validation_errors: event.data.errors, pending_inspection: null };
    case 'ListingInspectionRequested':
      return (
        state && {
          ...state,
          validation_status: 'pending',
          validation_errors: [],
          pending_inspection: { requested_at: event.data.requested_at },
          updated_at: event.data.requested_at,
        }
      );
    case 'AssetDownloaded':
      return state && { ...state, downloads: state.downloads + 1 };
    default:
      // A type this fold does not know (stored streams are read as they are) changes nothing.
      return state;
  }
}

/** The events a command records; [] for a repeat (publishing a published listing, the same failure again). */
export function decide(command: ListingCommand, state: ListingStreamState): ListingEvent[] {
  if (command.type === 'Draft') {
    // Drafted once: a second draft of the same id lost to the first, as the no_stream append did.
    if (state) throw Errors.conflict();
    const drafted: ListingEvent = { type: 'ListingDrafted', data: command.drafted };
    if (!command.publish) return [drafted];
    const draft = evolve(undefined, drafted)!;
    const at = command.drafted.created_at;
    return [drafted, command.background ? inspectionRequested(draft, at, command.publish) : published(draft, at, command.publish)];
  }
  if (command.type === 'CompleteInspection') {
    // The worker replays its events after a restart: an outcome already recorded, or for a request since replaced, records nothing.
    if (!state || state.pending_inspection?.requested_at !== command.requested_at) return [];
    if (!command.problems.length) return [published(state, command.now, command.files, command.sample)];
    const failed: ListingValidationFailed = {
      listing_id: state.id,
      account_id: state.account_id,
      mode: state.mode,
      errors: command.problems,
      failed_at: command.now,
      background: true,
      listing: {},
    };
    failed.listing = toPublicObject(evolve(state, { type: 'ListingValidationFailed', data: failed })!);
    return [{ type: 'ListingValidationFailed', data: failed }];
  }
  if (command.type === 'RecordDownload') {
    if (!state || state.account_id === command.buyer_account_id) return [];
    const downloaded: AssetDownloaded = {
      listing_id: state.id,
      account_id: state.account_id,
      buyer_account_id: command.buyer_account_id,
      mode: state.mode,
      asset: { id: state.id, slug: state.slug, title: state.title, type: state.type },
      downloaded_at: command.now,
    };
    return [{ type: 'AssetDownloaded', data: downloaded }];
  }
  // Another account's listing is 404 like a missing one, never 403.
  if (state?.account_id !== command.account_id) throw Errors.notFound('listing');
  switch (command.type) {
    case 'Update': {
      if (!Object.keys(command.changes).length) return [];
      const updated: ListingUpdated = { listing_id: state.id, account_id: state.account_id, mode: state.mode, changes: command.changes, updated_at: command.now };
      return [{ type: 'ListingUpdated', data: updated }];
    }
    case 'Publish':
      // Published already, or its files still being inspected: the answer is the listing as it is.
      if (state.status === 'published' || state.pending_inspection) return [];
      return [command.background ? inspectionRequested(state, command.now, command.files) : published(state, command.now, command.files, command.sample)];
    case 'RecordPublishFailure': {
      // The same failure again records nothing.
      if (state.validation_status === 'failed' && JSON.stringify(state.validation_errors) === JSON.stringify(command.problems)) return [];
      const failed: ListingValidationFailed = { listing_id: state.id, account_id: state.account_id, mode: state.mode, errors: command.problems, failed_at: command.now };
      return [{ type: 'ListingValidationFailed', data: failed }];
    }
    case 'Unpublish': {
      // A draft that was never published stays a draft.
      if (state.status !== 'published') return [];
      const data: ListingUnpublished = { listing_id: state.id, account_id: state.account_id, mode: state.mode, listing: {}, unpublished_at: command.now };
      data.listing = toPublicObject(evolve(state, { type: 'ListingUnpublished', data })!);
      return [{ type: 'ListingUnpublished', data }];
    }
  }
}

/** ListingPublished carries the public object as it reads once published (the webhook payload) and the files buyers get. */
function published(listing: ListingState, at: string, files: PublishedFile[], sample?: DatasetSample): ListingEvent {
  const data: ListingPublished = { listing_id: listing.id, account_id: listing.account_id, mode: listing.mode, listing: {}, files, ...(sample && { sample }), published_at: at };
  data.listing = toPublicObject(evolve(listing, { type: 'ListingPublished', data })!);
  return { type: 'ListingPublished', data };
}

/** Files frozen, some still to inspect: the inspection worker records the outcome (CompleteInspection). */
function inspectionRequested(listing: ListingState, at: string, files: PublishedFile[]): ListingEvent {
  const data: ListingInspectionRequested = { listing_id: listing.id, account_id: listing.account_id, mode: listing.mode, files, requested_at: at };
  return { type: 'ListingInspectionRequested', data };
}

export const listingDecider: Decider<ListingCommand, ListingEvent, ListingStreamState> = { initialState, evolve, decide };

/**
 * What inspection found (issue 40), readable before purchase: a model's file's inspection;
 * for a dataset, each shard's (the first LIST_CAP) and the layout they follow (issue 41). Null before the first publish and for
 * listings published before inspection existed.
 */
function inspectionOf(s: ListingState): Record<string, unknown> | null {
  const files = s.published_files;
  if (!files?.length || !files.some((f) => f.inspection)) return null;
  if (s.kind === 'model') return files[0].inspection ?? null;
  return { format: 'dataset', shards: files.length, layout: datasetLayout(files), files: capped(files).map((f) => ({ name: f.name, size: f.size, ...f.inspection })) };
}

/**
 * A dataset's top-level `layout` (issue 41 item 4, decision 0071): the layout's name and what
 * it knows, as datasetLayout finds it; null until its files are inspected at publish.
 */
export function layoutOf(s: Pick<ListingState, 'published_files'>): Record<string, unknown> | null {
  const files = s.published_files;
  if (!files?.length || !files.some((f) => f.inspection)) return null;
  const { kind, ...known } = datasetLayout(files);
  return { name: kind, ...known };
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
    inspection: inspectionOf(s),
    ...(s.kind === 'dataset' && { layout: layoutOf(s) }),
    readme: s.readme ?? null,
    downloads: s.downloads,
    featured: s.featured,
    // Keys in the order a stored event's jsonb gives them, so an answer built from a state folded
    // in memory reads byte for byte like one built from the read model or a reload.
    author: { name: s.author.name, slug: s.author.slug },
    created_at: s.created_at,
    updated_at: s.updated_at,
  };
}
