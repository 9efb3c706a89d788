import { Inject, Injectable } from '@nestjs/common';
import type { AuthContext } from '../platform/auth/auth-context';
import { Errors } from '../platform/errors';
import { KeptStates } from '../platform/kept-states';
import { BLOB_STORE, BlobStore } from '../storage/blob-store';
import { blobsOfMode } from '../storage/mode-staging';
import { CatalogQueries } from './catalog-queries';
import { datasetSummary, DatasetSample } from './dataset-preview';
import { Entitlements } from './entitlement';
import { layoutOf } from './listing.decider';
import type { ListingState } from './listing';
import { ShardChecksums } from './shard-checksums';
import { shardPrefix } from './shards';

/** Files a preview page lists by default, and at most (limit=). */
export const PREVIEW_FILES_DEFAULT = 100;
export const PREVIEW_FILES_MAX = 1000;
/** Kept previews, weighed in files: a 10,000-shard dataset weighs 10,001. */
const KEPT_PREVIEW_FILES = 100_000;

interface PreviewFile {
  name: string;
  size: number;
  sha256: string | null;
  format: string | null;
  inspection: Record<string, unknown> | null;
}

interface BuiltPreview {
  id: string;
  layout: Record<string, unknown> | null;
  summary: Record<string, unknown>;
  /** By name, so a page is a slice after a name. */
  files: PreviewFile[];
  sample: DatasetSample | null;
}

export interface PreviewPage {
  prefix?: string;
  after?: string;
  limit: number;
}

/**
 * GET /v1/datasets/{id}/preview (issue 41 item 5, decisions 0071 and 0072): built from what
 * the publish recorded (each file's inspection, the layout, the sample read at publish), never
 * from storage, and kept per listing revision: a call reads one narrow row (who may see it,
 * its revision) and slices the kept preview. A draft (its owner only) is listed from storage.
 */
@Injectable()
export class DatasetPreviews {
  private readonly kept = new KeptStates<BuiltPreview>(KEPT_PREVIEW_FILES);
  /** Builds under way by key and revision: callers arriving together share one read of the state. */
  private readonly building = new Map<string, Promise<BuiltPreview | undefined>>();

  constructor(
    private readonly queries: CatalogQueries,
    private readonly entitlements: Entitlements,
    private readonly checksums: ShardChecksums,
    @Inject(BLOB_STORE) private readonly store: BlobStore,
  ) {}

  async preview(auth: AuthContext, idOrSlug: string, page: PreviewPage): Promise<Record<string, unknown>> {
    const head = await this.queries.findHead(auth.mode, 'dataset', idOrSlug);
    // Published, the caller's own in any state, or bought: anyone else (another mode too) gets 404.
    if (!head || !(await this.entitlements.isReachable(auth, head))) throw Errors.notFound('dataset');
    const key = `${head.mode}:${head.id}`;
    let built = this.kept.get(key);
    if (built?.revision === head.revision) return pageOf(built.state, page);
    const flight = `${key}@${head.revision}`;
    let building = this.building.get(flight);
    if (!building) {
      building = this.build(auth, head.id, key, head.revision).finally(() => this.building.delete(flight));
      this.building.set(flight, building);
    }
    const preview = await building;
    if (!preview) throw Errors.notFound('dataset');
    return pageOf(preview, page);
  }

  private async build(auth: AuthContext, id: string, key: string, revision: number): Promise<BuiltPreview | undefined> {
    const state = await this.queries.find(auth.mode, 'dataset', id);
    if (!state) return undefined;
    if (!state.published_files) return this.fromDraft(state);
    const preview = this.fromPublished(state);
    // A draft (above) is read from storage each time: what landed changes without a new revision.
    this.kept.keep(key, { state: preview, revision }, preview.files.length + 1);
    return preview;
  }

  private fromPublished(state: ListingState): BuiltPreview {
    const files = [...state.published_files!].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return {
      id: state.id,
      layout: layoutOf(state),
      summary: datasetSummary(files),
      files: files.map((f) => ({ name: f.name, size: f.size, sha256: f.sha256, format: f.inspection?.format ?? null, inspection: f.inspection ?? null })),
      sample: state.preview_sample ?? null,
    };
  }

  /** The owner's draft: its landed shards, not inspected yet (inspection, layout and sample come with the publish). */
  private async fromDraft(state: ListingState): Promise<BuiltPreview> {
    const store = blobsOfMode(this.store, state.mode);
    const prefix = shardPrefix(state);
    const objects = await store.list(prefix);
    const sha256s = await this.checksums.of(state.mode, store, objects);
    const files = objects
      .map((o) => ({ name: o.path.slice(prefix.length), size: o.size, sha256: sha256s.get(o.path) ?? null, format: null, inspection: null }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const summary = { ...datasetSummary([]), files: files.length, total_bytes: files.reduce((n, f) => n + f.size, 0) };
    return { id: state.id, layout: null, summary, files, sample: null };
  }
}

/** The files after `after` (a name) that start with `prefix`, `limit` of them, and whether more follow. */
function pageOf(built: BuiltPreview, page: PreviewPage): Record<string, unknown> {
  let start = 0;
  if (page.after !== undefined) {
    // Binary search: the first name greater than `after`.
    let hi = built.files.length;
    while (start < hi) {
      const mid = (start + hi) >> 1;
      if (built.files[mid].name <= page.after) start = mid + 1;
      else hi = mid;
    }
  }
  const files: PreviewFile[] = [];
  let hasMore = false;
  for (let i = start; i < built.files.length; i++) {
    const file = built.files[i];
    if (page.prefix && !file.name.startsWith(page.prefix)) continue;
    if (files.length === page.limit) {
      hasMore = true;
      break;
    }
    files.push(file);
  }
  return { object: 'dataset_preview', id: built.id, layout: built.layout, summary: built.summary, files, has_more: hasMore, sample: built.sample };
}
