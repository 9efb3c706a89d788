import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { SETTINGS, Settings } from '../config/settings';
import { BLOB_STORE, BlobStore, describeFault, MULTIPART_ABANDONED_AFTER_MS } from './blob-store';

const SWEEP_EVERY_MS = 3600 * 1000;

/**
 * Aborts multipart uploads abandoned for MULTIPART_ABANDONED_AFTER_MS, hourly, with the
 * workers: their parts would otherwise be kept (and, on S3, billed) for good. Every
 * instance may sweep; aborting an upload twice is harmless. On S3 a bucket lifecycle rule
 * (AbortIncompleteMultipartUpload) does the same, and this finds nothing left.
 */
@Injectable()
export class MultipartSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Storage');
  private timer?: NodeJS.Timeout;

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    @Inject(BLOB_STORE) private readonly store: BlobStore,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.settings.workers) return;
    this.timer = setInterval(() => void this.sweep(), SWEEP_EVERY_MS).unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  async sweep(now = new Date()): Promise<number> {
    try {
      const swept = await this.store.sweepMultipart(new Date(now.getTime() - MULTIPART_ABANDONED_AFTER_MS));
      if (swept) this.logger.log(`aborted ${swept} abandoned multipart upload(s)`);
      return swept;
    } catch (error) {
      this.logger.warn(`the multipart sweep failed, to be tried again in an hour: ${describeFault(error)}`);
      return 0;
    }
  }
}
