import { Body, Controller, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { IsInt, IsString, Min } from 'class-validator';
import { SETTINGS, Settings } from '../config/settings';
import { Auth, AuthContext, RequireScope } from '../platform/auth/auth-context';
import { Errors } from '../platform/errors';
import { BLOB_STORE, BlobStore, DOWNLOAD_URL_TTL_SECONDS } from '../storage/blob-store';
import { blobsOfMode } from '../storage/mode-staging';
import { CatalogQueries } from './catalog-queries';
import { ListingStore } from './listing-store';
import type { ListingState } from './listing';
import { Downloads } from './commands/download-asset';
import { Entitlements } from './entitlement';
import { assertServable, ServedFile } from './published-files';
import { assertShardName, shardPrefix } from './shards';
import { assertWithinMaxBytes } from './upload-policy';
import { UploadGrants } from './upload-grants';

export class CreateShardDto {
  @IsString()
  name: string;

  @IsInt()
  @Min(1)
  size: number;
}

/**
 * Shards of a dataset. Until its first publish the list is read from storage, so it shows
 * what actually landed (a shard has landed or it has not: no resume within one); the
 * first publish freezes them, and from then on the shards are the ones it recorded.
 */
@Controller('v1/datasets/:idOrSlug/shards')
export class ShardsController {
  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    @Inject(BLOB_STORE) private readonly store: BlobStore,
    private readonly queries: CatalogQueries,
    private readonly entitlements: Entitlements,
    private readonly listings: ListingStore,
    private readonly downloads: Downloads,
    private readonly grants: UploadGrants,
  ) {}

  /** Only the owner adds shards, until the dataset's first publish fixes them. */
  @Post()
  @HttpCode(200)
  @RequireScope('datasets:upload')
  async mint(@Auth() auth: AuthContext, @Param('idOrSlug') idOrSlug: string, @Body() body: CreateShardDto) {
    assertShardName(body.name);
    assertWithinMaxBytes(body.size, this.settings.uploads.maxBytes, 'size');
    // Decided on the dataset's stream: a shard right after the draft must not wait for a read model.
    const loaded = await this.listings.find(auth.mode, idOrSlug, 'dataset');
    if (loaded?.state.account_id !== auth.accountId) throw Errors.notFound('dataset');
    const dataset = loaded.state;
    if (dataset.published_files) {
      throw Errors.invalidRequest('This dataset was published, which fixed its shards; publish new data as a new dataset.');
    }
    const storagePath = `${shardPrefix(dataset)}${body.name}`;
    // A large shard is a multipart upload, completed through POST /v1/uploads/complete.
    const grant = await this.grants.grant(this.blobs(dataset), dataset.mode, storagePath, body.size);
    return { name: body.name, size: body.size, storage_path: storagePath, ...grant };
  }

  @Get()
  @RequireScope('datasets:read', 'datasets:upload')
  async list(@Auth() auth: AuthContext, @Param('idOrSlug') idOrSlug: string) {
    const dataset = await this.reachable(auth, idOrSlug);
    const items = (await this.shards(dataset)).map(({ name, size, sha256 }) => ({ name, size, sha256 }));
    return { items, count: items.length, total_bytes: items.reduce((sum, s) => sum + s.size, 0) };
  }

  /** The same entitlement as a model download: free, own, or bought. The first shard a buyer fetches in a UTC day counts the day's download. */
  @Get(':name')
  @RequireScope('datasets:read', 'datasets:upload')
  async fetch(@Auth() auth: AuthContext, @Param('idOrSlug') idOrSlug: string, @Param('name') name: string) {
    assertShardName(name);
    const dataset = await this.reachable(auth, idOrSlug);
    await this.entitlements.assertEntitled(auth, dataset);
    const shard = dataset.published_files ? dataset.published_files.find((s) => s.name === name) : await this.landed(dataset, name);
    if (!shard) throw Errors.notFound('shard');
    await assertServable(this.blobs(dataset), dataset, shard);
    await this.downloads.recordDatasetFetch(auth, dataset);
    const url = await this.blobs(dataset).signDownload(shard.path, { expiresIn: DOWNLOAD_URL_TTL_SECONDS, fileName: name });
    return { name, size: shard.size, sha256: shard.sha256, url, expires_in: DOWNLOAD_URL_TTL_SECONDS };
  }

  /** Published, the caller's own, or bought (an unpublished dataset stays its buyers'). */
  private async reachable(auth: AuthContext, idOrSlug: string): Promise<ListingState> {
    const dataset = await this.queries.find(auth.mode, 'dataset', idOrSlug);
    if (!dataset || !(await this.entitlements.isReachable(auth, dataset))) throw Errors.notFound('dataset');
    return dataset;
  }

  /** The frozen shards of a published dataset, else (drafts, datasets published before shards were recorded) what landed. */
  private async shards(dataset: ListingState): Promise<ServedFile[]> {
    if (dataset.published_files) return dataset.published_files;
    const prefix = shardPrefix(dataset);
    return (await this.blobs(dataset).list(prefix)).map((o) => ({ name: o.path.slice(prefix.length), path: o.path, size: o.size, sha256: null }));
  }

  private blobs(dataset: ListingState): BlobStore {
    return blobsOfMode(this.store, dataset.mode);
  }

  private async landed(dataset: ListingState, name: string): Promise<ServedFile | undefined> {
    const object = await this.blobs(dataset).stat(`${shardPrefix(dataset)}${name}`);
    return object && { name, path: object.path, size: object.size, sha256: null };
  }
}
