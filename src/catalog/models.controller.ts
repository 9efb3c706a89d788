import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { Auth, AuthContext, RequireScope } from '../platform/auth/auth-context';
import { Errors } from '../platform/errors';
import { CatalogQueries } from './catalog-queries';
import { DownloadAssetCommand } from './commands/download-asset';
import { DraftListingCommand } from './commands/draft-listing';
import { UnpublishListingCommand } from './commands/unpublish-listing';
import { UpdateListingCommand } from './commands/update-listing';
import { listingDetails, metadataChanges, PublishModelDto, UpdateListingDto } from './dto';
import { DATASET_TYPES, toListingObject, toPublicObject } from './listing';
import { PUBLIC_LIST_PARAMETERS, publicListQuery } from './list-params';
import { QueryParameters } from '../platform/known-parameters';
import { LongRunning } from '../platform/long-running';

/** Models (spec part 4): public reads of published rows; writes act on the caller's own. */
@Controller('v1/models')
export class ModelsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: CatalogQueries,
  ) {}

  @Get()
  @RequireScope('models:read')
  @QueryParameters(...PUBLIC_LIST_PARAMETERS)
  async list(@Auth() auth: AuthContext, @Query() query: Record<string, unknown>) {
    const page = await this.queries.listPublished(publicListQuery(auth, 'model', query));
    return { ...page, items: page.items.map(toPublicObject) };
  }

  @Get(':idOrSlug')
  @RequireScope('models:read')
  async get(@Auth() auth: AuthContext, @Param('idOrSlug') idOrSlug: string) {
    const listing = await this.queries.findPublished(auth.mode, 'model', idOrSlug);
    if (!listing) throw Errors.notFound('model');
    return toPublicObject(listing);
  }

  /**
   * Validates the uploaded object and publishes at once; a file above the inline inspection
   * limit answers validation_status pending, published once the inspection worker passes it.
   * The answer is the seller's view (Listing), which shows that status.
   */
  @Post()
  @LongRunning()
  @RequireScope('models:upload')
  async publish(@Auth() auth: AuthContext, @Body() body: PublishModelDto) {
    // A dataset made here would be a model no /v1/datasets route ever shows.
    if ((DATASET_TYPES as readonly string[]).includes(body.type)) {
      throw Errors.validationFailed(`Invalid field "type": "${body.type}" is a dataset type; create datasets with POST /v1/datasets.`);
    }
    const listing = await this.commands.execute(new DraftListingCommand(auth, 'model', listingDetails(body, { type: body.type }), true));
    return toListingObject(listing);
  }

  @Patch(':idOrSlug')
  @LongRunning()
  @RequireScope('listings:write')
  async update(@Auth() auth: AuthContext, @Param('idOrSlug') idOrSlug: string, @Body() body: UpdateListingDto) {
    return toListingObject(await this.commands.execute(new UpdateListingCommand(auth, idOrSlug, metadataChanges(body), 'model')));
  }

  @Delete(':idOrSlug')
  @RequireScope('listings:write')
  async unpublish(@Auth() auth: AuthContext, @Param('idOrSlug') idOrSlug: string) {
    return toListingObject(await this.commands.execute(new UnpublishListingCommand(auth, idOrSlug, 'model')));
  }

  @Post(':idOrSlug/download')
  @HttpCode(200)
  @RequireScope('models:read', 'datasets:read')
  download(@Auth() auth: AuthContext, @Param('idOrSlug') idOrSlug: string) {
    return this.commands.execute(new DownloadAssetCommand(auth, idOrSlug));
  }
}
