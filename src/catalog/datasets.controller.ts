import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { Auth, AuthContext, RequireScope } from '../platform/auth/auth-context';
import { Errors } from '../platform/errors';
import { CatalogQueries } from './catalog-queries';
import { DraftListingCommand } from './commands/draft-listing';
import { PublishListingCommand } from './commands/publish-listing';
import { UnpublishListingCommand } from './commands/unpublish-listing';
import { UpdateListingCommand } from './commands/update-listing';
import { CreateDatasetDto, listingDetails, metadataChanges, UpdateListingDto } from './dto';
import { toListingObject, toPublicObject } from './listing';
import { PUBLIC_LIST_PARAMETERS, publicListQuery } from './list-params';
import { QueryParameters } from '../platform/known-parameters';
import { LongRunning } from '../platform/long-running';
import { parseLimit } from '../platform/pagination';
import { DatasetPreviews, PREVIEW_FILES_DEFAULT, PREVIEW_FILES_MAX } from './dataset-previews';
import { assertShardName, assertShardPrefix } from './shards';

/** Datasets (spec part 4): drafts filled with shards, published once a shard landed. */
@Controller('v1/datasets')
export class DatasetsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: CatalogQueries,
    private readonly previews: DatasetPreviews,
  ) {}

  @Get()
  @RequireScope('datasets:read')
  @QueryParameters(...PUBLIC_LIST_PARAMETERS)
  async list(@Auth() auth: AuthContext, @Query() query: Record<string, unknown>) {
    const page = await this.queries.listPublished(publicListQuery(auth, 'dataset', query));
    return { ...page, items: page.items.map(toPublicObject) };
  }

  @Post()
  @RequireScope('datasets:upload')
  async create(@Auth() auth: AuthContext, @Body() body: CreateDatasetDto) {
    const details = listingDetails(body, { type: 'dataset' });
    return toListingObject(await this.commands.execute(new DraftListingCommand(auth, 'dataset', details, false)));
  }

  @Get(':idOrSlug')
  @RequireScope('datasets:read')
  async get(@Auth() auth: AuthContext, @Param('idOrSlug') idOrSlug: string) {
    const listing = await this.queries.findPublished(auth.mode, 'dataset', idOrSlug);
    if (!listing) throw Errors.notFound('dataset');
    return toPublicObject(listing);
  }

  /**
   * What a buyer sees before paying (issue 41 item 5, decision 0071): layout, summary, the
   * files with their inspections (a page of them: limit=, after= a name, prefix=) and a
   * sample of at most 20 rows and 256 KiB. Never a URL: the bytes stay behind the purchase.
   */
  @Get(':idOrSlug/preview')
  @RequireScope('datasets:read')
  async preview(
    @Auth() auth: AuthContext,
    @Param('idOrSlug') idOrSlug: string,
    @Query('limit') limit?: string,
    @Query('after') after?: string,
    @Query('prefix') prefix?: string,
  ) {
    for (const [name, value] of [['after', after], ['prefix', prefix]] as const) {
      if (value !== undefined && typeof value !== 'string') throw Errors.validationFailed(`Invalid field "${name}": give it once, as a string.`);
    }
    if (after) assertShardName(after, 'after');
    if (prefix) assertShardPrefix(prefix);
    const page = { limit: parseLimit(limit, { fallback: PREVIEW_FILES_DEFAULT, max: PREVIEW_FILES_MAX }), ...(after && { after }), ...(prefix && { prefix }) };
    return this.previews.preview(auth, idOrSlug, page);
  }

  @Patch(':idOrSlug')
  @LongRunning()
  @RequireScope('datasets:upload', 'listings:write')
  async update(@Auth() auth: AuthContext, @Param('idOrSlug') idOrSlug: string, @Body() body: UpdateListingDto) {
    return toListingObject(await this.commands.execute(new UpdateListingCommand(auth, idOrSlug, metadataChanges(body), 'dataset')));
  }

  @Delete(':idOrSlug')
  @RequireScope('datasets:upload', 'listings:write')
  async unpublish(@Auth() auth: AuthContext, @Param('idOrSlug') idOrSlug: string) {
    return toListingObject(await this.commands.execute(new UnpublishListingCommand(auth, idOrSlug, 'dataset')));
  }

  @Post(':idOrSlug/publish')
  @LongRunning()
  @HttpCode(200)
  @RequireScope('datasets:upload', 'listings:write')
  async publish(@Auth() auth: AuthContext, @Param('idOrSlug') idOrSlug: string) {
    return toListingObject(await this.commands.execute(new PublishListingCommand(auth, idOrSlug, 'dataset')));
  }
}
