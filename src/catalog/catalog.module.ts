import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module';
import { CatalogQueries } from './catalog-queries';
import { DownloadAssetHandler } from './commands/download-asset';
import { DraftListingHandler } from './commands/draft-listing';
import { PublishListingHandler } from './commands/publish-listing';
import { UnpublishListingHandler } from './commands/unpublish-listing';
import { UpdateListingHandler } from './commands/update-listing';
import { DatasetsController } from './datasets.controller';
import { EntitlementLookup } from '../commerce/entitlement-lookup';
import { PurchaseQueries } from '../commerce/purchase-queries';
import { Entitlements, PURCHASE_LOOKUP } from './entitlement';
import { ListingStore } from './listing-store';
import { ListingsController } from './listings.controller';
import { ModelsController } from './models.controller';
import { ShardsController } from './shards.controller';
import { UploadsController } from './uploads.controller';

@Module({
  imports: [AccountsModule],
  controllers: [UploadsController, ModelsController, ListingsController, DatasetsController, ShardsController],
  providers: [
    CatalogQueries,
    ListingStore,
    Entitlements,
    // The commerce context's streams (and read model, for purchases older than them); plain reads, so no module cycle.
    PurchaseQueries,
    { provide: PURCHASE_LOOKUP, useClass: EntitlementLookup },
    DraftListingHandler,
    PublishListingHandler,
    UnpublishListingHandler,
    UpdateListingHandler,
    DownloadAssetHandler,
  ],
  exports: [CatalogQueries, Entitlements, ListingStore],
})
export class CatalogModule {}
