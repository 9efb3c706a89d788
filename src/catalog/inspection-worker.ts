import { Inject, Injectable, Logger } from '@nestjs/common';
import { SETTINGS, Settings } from '../config/settings';
import type { RecordedEvent } from '../event-store/event-store';
import { EventWriter } from '../projection-runner/event-writer';
import { ProjectionRunner } from '../projection-runner/projection-runner';
import { BLOB_STORE, BlobStore } from '../storage/blob-store';
import { blobsOfMode } from '../storage/mode-staging';
import { CatalogEvents, ListingInspectionRequested } from './events';
import { ListingStore } from './listing-store';
import { inspectFiles } from './published-files';
import { datasetSample } from './dataset-preview';

/** Its row in projection_checkpoints; like the factory worker, a subscriber that is never rebuilt. */
export const INSPECTION_WORKER_CHECKPOINT = 'subscriber:listing_inspections';

/** A batch is inspected one file after another: kept small so the checkpoint follows closely. */
const BATCH_SIZE = 5;

/**
 * Background inspection of published files larger than the inline limit (issue 40,
 * INSPECTION_INLINE_MAX_BYTES): a checkpointed subscriber over the event log, as the factory's
 * JobWorker is. A publish with such a file records ListingInspectionRequested (the listing is
 * validation_status pending, not readable by buyers); this worker inspects the files the
 * request left uninspected and records the outcome on the listing's stream: ListingPublished,
 * or ListingValidationFailed (the listing.validation_failed webhook). The checkpoint passes a
 * request only after its outcome is stored, so a worker killed mid-inspection inspects again
 * after the restart; the decider records one outcome per request however often it runs
 * (CompleteInspection on a request already decided, or since replaced, records nothing).
 */
@Injectable()
export class InspectionWorker {
  private readonly logger = new Logger('InspectionWorker');

  constructor(
    private readonly projections: ProjectionRunner,
    private readonly writer: EventWriter,
    private readonly listings: ListingStore,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  start(): Promise<void> {
    return this.projections.subscribe({
      name: INSPECTION_WORKER_CHECKPOINT,
      batchSize: BATCH_SIZE,
      // A storage fault is not a verdict on the file: the request is retried (with backoff), never skipped.
      whenFailing: 'stop',
      types: [CatalogEvents.ListingInspectionRequested],
      apply: async () => undefined,
      before: (events) =>
        this.writer.gatheringWaits(async () => {
          for (const event of events) await this.handle(event);
        }),
    });
  }

  stop(): Promise<void> {
    return this.projections.unsubscribe(INSPECTION_WORKER_CHECKPOINT);
  }

  /** One request as the subscription hands it over; running it twice records one outcome. */
  async handle(event: RecordedEvent): Promise<void> {
    const request = event.data as ListingInspectionRequested;
    const { state } = await this.listings.load(request.mode, request.listing_id);
    // Decided already (a replay after a restart), or replaced by a later publish: nothing to do.
    if (state.pending_inspection?.requested_at !== request.requested_at) return;
    const store = blobsOfMode(this.blobs, request.mode);
    const started = Date.now();
    const { files, problems } = await inspectFiles(store, request.files, this.settings.inspection, (file) => !file.inspection);
    // A dataset's preview sample is read once its files passed (decision 0071).
    const sample = !problems.length && state.kind === 'dataset' ? await datasetSample(store, files, this.settings.inspection) : undefined;
    this.logger.log(`listing ${request.listing_id} (${request.mode}): ${problems.length ? 'failed' : 'passed'} background inspection in ${Date.now() - started} ms`);
    await this.listings.handle(request.mode, request.listing_id, {
      type: 'CompleteInspection',
      requested_at: request.requested_at,
      files,
      problems,
      ...(sample && { sample }),
      now: new Date().toISOString(),
    });
  }
}
