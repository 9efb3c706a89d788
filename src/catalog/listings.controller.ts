import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { Auth, AuthContext, RequireScope } from '../platform/auth/auth-context';
import { Errors } from '../platform/errors';
import { createdRange, CREATED_PARAMETERS } from '../platform/created-range';
import { QueryParameters } from '../platform/known-parameters';
import { parseCursor, parseLimit } from '../platform/pagination';
import { CatalogQueries } from './catalog-queries';
import { DraftListingCommand } from './commands/draft-listing';
import { PublishListingCommand } from './commands/publish-listing';
import { UnpublishListingCommand } from './commands/unpublish-listing';
import { UpdateListingCommand } from './commands/update-listing';
import { DraftListingDto, listingDetails, metadataChanges, UpdateListingDto } from './dto';
import { DATASET_TYPES, ListingStatus, toListingObject } from './listing';
import { LongRunning } from '../platform/long-running';

const STATUSES: readonly ListingStatus[] = ['draft', 'published', 'unpublished'];

/** The seller's view (decisions section 5): own listings of every kind and state. */
@Controller('v1/listings')
export class ListingsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: CatalogQueries,
  ) {}

  @Get()
  @RequireScope('listings:read')
  @QueryParameters('status', 'limit', 'cursor', ...CREATED_PARAMETERS)
  async list(@Auth() auth: AuthContext, @Query() query: Record<string, unknown>) {
    const status = query.status === undefined || query.status === '' ? undefined : String(query.status);
    if (status !== undefined && !STATUSES.includes(status as ListingStatus)) {
      throw Errors.validationFailed('Invalid field "status": must be draft, published or unpublished.');
    }
    const page = await this.queries.listOwn(auth, {
      status: status as ListingStatus | undefined,
      cursor: parseCursor(query.cursor),
      limit: parseLimit(query.limit, { fallback: 20, max: 100 }),
      created: createdRange(query),
    });
    return { ...page, items: page.items.map(toListingObject) };
  }

  /** An unpublished draft; a dataset type makes a dataset draft. */
  @Post()
  @RequireScope('listings:write')
  async draft(@Auth() auth: AuthContext, @Body() body: DraftListingDto) {
    const kind = (DATASET_TYPES as readonly string[]).includes(body.type ?? '') ? 'dataset' : 'model';
    const details = listingDetails(body, { type: 'model' });
    if (kind === 'dataset') details.file = null;
    return toListingObject(await this.commands.execute(new DraftListingCommand(auth, kind, details, false)));
  }

  @Get(':idOrSlug')
  @RequireScope('listings:read')
  async get(@Auth() auth: AuthContext, @Param('idOrSlug') idOrSlug: string) {
    const listing = await this.queries.findOwn(auth, idOrSlug);
    if (!listing) throw Errors.notFound('listing');
    return toListingObject(listing);
  }

  @Patch(':idOrSlug')
  @LongRunning()
  @RequireScope('listings:write')
  async update(@Auth() auth: AuthContext, @Param('idOrSlug') idOrSlug: string, @Body() body: UpdateListingDto) {
    return toListingObject(await this.commands.execute(new UpdateListingCommand(auth, idOrSlug, metadataChanges(body))));
  }

  @Post(':idOrSlug/publish')
  @LongRunning()
  @HttpCode(200)
  @RequireScope('listings:write')
  async publish(@Auth() auth: AuthContext, @Param('idOrSlug') idOrSlug: string) {
    return toListingObject(await this.commands.execute(new PublishListingCommand(auth, idOrSlug)));
  }

  @Post(':idOrSlug/unpublish')
  @HttpCode(200)
  @RequireScope('listings:write')
  async unpublish(@Auth() auth: AuthContext, @Param('idOrSlug') idOrSlug: string) {
    return toListingObject(await this.commands.execute(new UnpublishListingCommand(auth, idOrSlug)));
  }
}
