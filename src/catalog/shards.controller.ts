import { Body, Controller, createParamDecorator, ExecutionContext, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { ApiParam } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { IsInt, IsOptional, IsString, Matches, Min } from 'class-validator';
import { SETTINGS, Settings } from '../config/settings';
import { Auth, AuthContext, RequireScope } from '../platform/auth/auth-context';
import { Errors } from '../platform/errors';
import { BLOB_STORE, BlobStore, DOWNLOAD_URL_TTL_SECONDS, SHA256_HEX, StoredObject } from '../storage/blob-store';
import { blobsOfMode } from '../storage/mode-staging';
import { CatalogQueries } from './catalog-queries';
import { ListingStore } from './listing-store';
import type { ListingState } from './listing';
import { Downloads } from './commands/download-asset';
import { Entitlements } from './entitlement';
import { assertServable, ServedFile } from './published-files';
import { assertShardName, assertShardPrefix, shardPrefix } from './shards';
import { ShardChecksums } from './shard-checksums';
import { assertWithinMaxBytes } from './upload-policy';
import { UploadGrants } from './upload-grants';

export class CreateShardDto {
  @IsString()
  name: string;

  @IsInt()
  @Min(1)
  size: number;

  /** Lowercase hex SHA-256 of the bytes: the upload URL then takes those bytes only. */
  @IsOptional()
  @Matches(SHA256_HEX, { message: 'sha256 must be 64 lowercase hexadecimal characters' })
  sha256?: string;
}

/**
 * The shard's name from the route: everything after /shards/, so folders need no encoding
 * ("shards/data/chunk-000/x.parquet"); "%2F" is decoded by the router to the same name.
 * Fastify names a wildcard "*"; the document calls it {path}.
 */
const ShardPath = createParamDecorator((_data: unknown, context: ExecutionContext): string => {
  const params = context.switchToHttp().getRequest<FastifyRequest>().params as Record<string, string>;
  return params['*'] ?? '';
});

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
    private readonly checksums: ShardChecksums,
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
    const grant = await this.grants.grant(this.blobs(dataset), dataset.mode, storagePath, body.size, body.sha256);
    return { name: body.name, size: body.size, storage_path: storagePath, ...(body.sha256 && { sha256: body.sha256 }), ...grant };
  }

  /** prefix= keeps the shards whose name starts with it ("data/", "videos/chunk-000/"). */
  @Get()
  @RequireScope('datasets:read', 'datasets:upload')
  async list(@Auth() auth: AuthContext, @Param('idOrSlug') idOrSlug: string, @Query('prefix') prefix?: string) {
    if (prefix !== undefined && typeof prefix !== 'string') throw Errors.validationFailed('Invalid field "prefix": give it once, as a string.');
    if (prefix) assertShardPrefix(prefix);
    const dataset = await this.reachable(auth, idOrSlug);
    const items = (await this.shards(dataset, prefix ?? '')).map(({ name, size, sha256 }) => ({ name, size, sha256 }));
    return { items, count: items.length, total_bytes: items.reduce((sum, s) => sum + s.size, 0) };
  }

  /** The same entitlement as a model download: free, own, or bought. The first shard a buyer fetches in a UTC day counts the day's download. */
  @Get('*')
  @ApiParam({ name: 'path', description: 'The shard name, folders included (meta/info.json), or the same with "/" as %2F.', schema: { type: 'string' } })
  @RequireScope('datasets:read', 'datasets:upload')
  async fetch(@Auth() auth: AuthContext, @Param('idOrSlug') idOrSlug: string, @ShardPath() name: string) {
    assertShardName(name);
    const dataset = await this.reachable(auth, idOrSlug);
    await this.entitlements.assertEntitled(auth, dataset);
    const shard = dataset.published_files ? dataset.published_files.find((s) => s.name === name) : await this.landed(dataset, name);
    if (!shard) throw Errors.notFound('shard');
    await assertServable(this.blobs(dataset), dataset, shard);
    await this.downloads.recordDatasetFetch(auth, dataset);
    // Saved under its own file name; the folders are the client's to make (svc datasets download does).
    const fileName = name.slice(name.lastIndexOf('/') + 1);
    const url = await this.blobs(dataset).signDownload(shard.path, { expiresIn: DOWNLOAD_URL_TTL_SECONDS, fileName });
    return { name, size: shard.size, sha256: shard.sha256, url, expires_in: DOWNLOAD_URL_TTL_SECONDS };
  }

  /** Published, the caller's own, or bought (an unpublished dataset stays its buyers'). */
  private async reachable(auth: AuthContext, idOrSlug: string): Promise<ListingState> {
    const dataset = await this.queries.find(auth.mode, 'dataset', idOrSlug);
    if (!dataset || !(await this.entitlements.isReachable(auth, dataset))) throw Errors.notFound('dataset');
    return dataset;
  }

  /** The frozen shards of a published dataset, else (drafts, datasets published before shards were recorded) what landed. */
  private async shards(dataset: ListingState, namePrefix: string): Promise<ServedFile[]> {
    if (dataset.published_files) return dataset.published_files.filter((s) => s.name.startsWith(namePrefix));
    const prefix = shardPrefix(dataset);
    return this.served(dataset, prefix, await this.blobs(dataset).list(`${prefix}${namePrefix}`));
  }

  private blobs(dataset: ListingState): BlobStore {
    return blobsOfMode(this.store, dataset.mode);
  }

  private async landed(dataset: ListingState, name: string): Promise<ServedFile | undefined> {
    const object = await this.blobs(dataset).stat(`${shardPrefix(dataset)}${name}`);
    return object && (await this.served(dataset, shardPrefix(dataset), [object]))[0];
  }

  /** Landed objects as shards, with the sha256 the service knows or computes now (shard-checksums.ts). */
  private async served(dataset: ListingState, prefix: string, objects: StoredObject[]): Promise<ServedFile[]> {
    const sha256s = await this.checksums.of(dataset.mode, this.blobs(dataset), objects);
    return objects.map((o) => ({ name: o.path.slice(prefix.length), path: o.path, size: o.size, sha256: sha256s.get(o.path) ?? null }));
  }
}
