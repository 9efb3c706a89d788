import type { InspectionLimits } from '../inspection/inspection';
import { missingLeRobotEpisodes } from '../inspection/layout';
import { ApiError, Errors } from '../platform/errors';
import { BlobStore } from '../storage/blob-store';
import { blobsOfMode } from '../storage/mode-staging';
import type { ListingFile, PublishedFile } from './events';
import { assertValidPrice, ListingState } from './listing';
import { assertServable, fileNotFound, freezeFile, inspectFrozen, needsBackgroundInspection } from './published-files';
import { assertAllowedExtension, assertOwnStoragePath, extensionOf } from './upload-policy';
import { shardPrefix } from './shards';
import { DatasetSample, datasetSample } from './dataset-preview';

/** What can be checked about a file without reading storage: its prefix and extensions. */
export function assertFileReference(accountId: string, file: ListingFile): void {
  assertOwnStoragePath(accountId, file.storage_path);
  assertAllowedExtension(file.extension, 'file_extension');
  assertAllowedExtension(extensionOf(file.storage_path), 'storage_path');
}

/**
 * The checks a listing passes before it becomes visible (spec part 4 rules 1-2, decisions
 * section 5), then the freezing and inspection of its files (published-files.ts); returns the files that
 * ListingPublished records. A failure records nothing (at most an unreferenced frozen copy
 * stays in storage). A listing published before keeps the files frozen then. `background`:
 * some files are larger than the inline limit and were left for the inspection worker.
 * `sample`: a dataset's preview sample, read now unless the inspection is left for the worker.
 */
export async function preparePublication(
  listing: ListingState,
  blobs: BlobStore,
  limits: InspectionLimits & { inlineMaxBytes?: number },
): Promise<{ files: PublishedFile[]; background: boolean; sample?: DatasetSample }> {
  const store = blobsOfMode(blobs, listing.mode);
  assertValidPrice(listing.price.amount);
  if (listing.published_files) {
    for (const file of listing.published_files) await assertServable(store, listing, file);
    return { files: listing.published_files, background: false };
  }
  const files = await frozenAndInspected(listing, store, limits);
  const background = needsBackgroundInspection(files);
  // A dataset's preview sample is read with its inspection (decision 0071); the inspection worker reads it for a background one.
  if (listing.kind !== 'dataset' || background) return { files, background };
  return { files, background, sample: await datasetSample(store, files, limits) };
}

async function frozenAndInspected(listing: ListingState, store: BlobStore, limits: InspectionLimits & { inlineMaxBytes?: number }): Promise<PublishedFile[]> {
  if (listing.kind === 'dataset') {
    const prefix = shardPrefix(listing);
    const shards = await store.list(prefix);
    if (!shards.length) throw fileNotFound('No shard of this dataset has landed in storage yet; upload at least one first.');
    const files: PublishedFile[] = [];
    for (const shard of shards) files.push(await freezeFile(store, shard.path.slice(prefix.length), shard.path));
    const inspected = await inspectFrozen(store, files, limits);
    assertLayoutComplete(inspected);
    return inspected;
  }
  const file = listing.file;
  if (!file) throw Errors.validationFailed('Invalid field "storage_path": a model needs an uploaded file before it is published.');
  assertFileReference(listing.account_id, file);
  const object = await store.stat(file.storage_path);
  if (!object) throw fileNotFound(`Nothing is stored at "${file.storage_path}" yet; PUT the bytes to the upload_url first.`);
  const sizeMismatch = (size: number) => Errors.validationFailed(`Invalid field "file_size": the stored object has ${size} bytes, not ${file.size}.`);
  if (object.size !== file.size) throw sizeMismatch(object.size);
  // The upload may still be overwritten until the copy starts: the copy's size is what counts.
  const frozen = await freezeFile(store, file.name, file.storage_path);
  if (frozen.size !== file.size) throw sizeMismatch(frozen.size);
  return inspectFrozen(store, [frozen], limits);
}

/**
 * A dataset whose LeRobot meta/info.json claims episodes whose files are not there fails
 * validation naming them (issue 41): a buyer would pay for episodes that do not exist.
 */
function assertLayoutComplete(files: PublishedFile[]): void {
  const gap = missingLeRobotEpisodes(files);
  if (!gap) return;
  const message = `"meta/info.json" claims ${gap.claimed} episodes but these files are missing: ${gap.missing.join(', ')}`;
  throw new ApiError(400, 'validation_failed', message, { validation_errors: [{ code: 'layout_incomplete', message }] });
}
