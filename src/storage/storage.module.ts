import { Global, Inject, Module, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { SETTINGS, Settings } from '../config/settings';
import { BLOB_STORE, BlobStore } from './blob-store';
import { localBlobRoutes } from './local-blob-routes';
import { LocalBlobStore } from './local-blob-store';
import { MultipartSweeper } from './multipart-sweeper';

/** S3 when S3_BUCKET is set, else the local store, which also serves its signed URLs. */
@Global()
@Module({
  providers: [
    {
      provide: BLOB_STORE,
      inject: [SETTINGS],
      // The AWS SDK loads only where it is used (S3_BUCKET set).
      useFactory: async (settings: Settings): Promise<BlobStore> =>
        settings.s3 ? (await import('./s3-blob-store')).S3BlobStore.fromSettings(settings.s3) : new LocalBlobStore(settings.dataDir, settings.publicBaseUrl),
    },
    MultipartSweeper,
  ],
  exports: [BLOB_STORE],
})
export class StorageModule implements OnModuleInit {
  constructor(
    @Inject(BLOB_STORE) private readonly store: BlobStore,
    private readonly http: HttpAdapterHost,
  ) {}

  onModuleInit(): void {
    if (this.store instanceof LocalBlobStore) {
      // Not awaited: awaiting boots the plugin queue early, and the API routes Nest adds
      // afterwards would then keep Fastify's default error handler instead of Nest's
      // (the error envelope would be lost for body-parsing errors). Loaded at ready().
      void this.http.httpAdapter.getInstance().register(localBlobRoutes(this.store));
    }
  }
}
