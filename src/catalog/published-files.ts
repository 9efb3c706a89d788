import { Logger } from '@nestjs/common';
import { ApiError, Errors } from '../platform/errors';
import { BlobStore, ObjectChangedError } from '../storage/blob-store';
import type { InspectionLimits, InspectionProblem } from '../inspection/inspection';
import { InspectionContext, RangedFile } from '../inspection/ranged-file';
import { inspectFile } from '../inspection/registry';
import type { PublishedFile } from './events';
import type { ListingState } from './listing';

/**
 * Published files are immutable: publishing copies each file to its content-addressed key
 * (BlobStore.freeze) and records name, size and sha256 in ListingPublished; buyers are
 * served that copy, checked before every download. Upload URLs only ever write the
 * seller's staging keys, so they cannot change what buyers get.
 */
const logger = new Logger('PublishedFiles');

export const fileNotFound = (what: string) => new ApiError(400, 'file_not_found', what);

/** Copies the object at path to its content-addressed key and describes the copy. */
export async function freezeFile(store: BlobStore, name: string, path: string): Promise<PublishedFile> {
  let frozen;
  try {
    frozen = await store.freeze(path);
  } catch (error) {
    if (error instanceof ObjectChangedError) throw Errors.conflict(`"${name}" was overwritten while it was being published; retry the request.`);
    throw error;
  }
  if (!frozen) throw fileNotFound(`Nothing is stored at "${path}" yet; PUT the bytes to the upload_url first.`);
  return { name, size: frozen.size, sha256: frozen.sha256, path: frozen.path };
}

/**
 * Opens each frozen copy with its format's inspector (src/inspection) and records what it
 * found on the file; any file that is not what its extension says refuses the publish:
 * 400 validation_failed with one validation_errors entry a file, each naming it. A file
 * larger than `inlineMaxBytes` is left uninspected (no `inspection`): the inspection worker
 * opens it after the publish answered (needsBackgroundInspection).
 */
export async function inspectFrozen(store: BlobStore, files: PublishedFile[], limits: InspectionLimits & { inlineMaxBytes?: number }): Promise<PublishedFile[]> {
  const inline = limits.inlineMaxBytes ?? Infinity;
  const { files: inspected, problems } = await inspectFiles(store, files, limits, (file) => file.size <= inline);
  if (problems.length) throw inspectionRefusal(problems);
  return inspected;
}

/** True when some of the files were left for the inspection worker (larger than the inline limit). */
export function needsBackgroundInspection(files: PublishedFile[]): boolean {
  return files.some((file) => !file.inspection);
}

/**
 * Inspects the files `which` selects (every file by default), in order; the others are
 * returned as they are. Problems are the files that failed, each naming its file.
 */
export async function inspectFiles(
  store: BlobStore,
  files: PublishedFile[],
  limits: InspectionLimits,
  which: (file: PublishedFile) => boolean = () => true,
): Promise<{ files: PublishedFile[]; problems: InspectionProblem[] }> {
  const problems: InspectionProblem[] = [];
  const inspected: PublishedFile[] = [];
  // The files published together (a rosbag2 .db3 reads its bag's metadata.yaml), each read within its own budget.
  const siblings: InspectionContext = {
    sibling: (name) => {
      const other = files.find((f) => f.name === name);
      return other && RangedFile.ofStore(store, other.path, other.name, other.size, limits);
    },
  };
  for (const file of files) {
    if (!which(file)) {
      inspected.push(file);
      continue;
    }
    const outcome = await inspectFile(RangedFile.ofStore(store, file.path, file.name, file.size, limits), siblings);
    if (outcome.ok) inspected.push({ ...file, inspection: outcome.inspection });
    else problems.push(outcome.problem);
  }
  return { files: inspected, problems };
}

/** The 400 a publish whose files failed inspection answers. */
export function inspectionRefusal(problems: InspectionProblem[]): ApiError {
  const message = problems.length === 1 ? problems[0].message : `${problems.length} files failed inspection; the first: ${problems[0].message}`;
  return new ApiError(400, 'validation_failed', message, { validation_errors: problems });
}

/** The problems a refused publish records: an inspection's per-file list, or the error itself. */
export function problemsOf(error: ApiError): InspectionProblem[] {
  const listed = error.extra.validation_errors;
  return Array.isArray(listed) && listed.length ? (listed as InspectionProblem[]) : [{ code: error.code, message: error.message }];
}

/** A file buyers may be served; sha256 is null for listings published before it was recorded. */
export type ServedFile = Pick<PublishedFile, 'name' | 'path' | 'size'> & { sha256: string | null };

/**
 * A model's file as buyers get it: the copy frozen at publish or, for a listing published
 * before files were recorded (or the owner's draft), its upload at the declared size.
 */
export function servedModelFile(listing: ListingState): ServedFile | undefined {
  const frozen = listing.published_files?.[0];
  if (frozen) return frozen;
  return listing.file ? { name: listing.file.name, path: listing.file.storage_path, size: listing.file.size, sha256: null } : undefined;
}

/**
 * Checked before a download URL is signed (one HEAD): the object is there with the size
 * recorded. Anything else is logged and refused rather than served.
 */
export async function assertServable(store: BlobStore, listing: ListingState, file: ServedFile): Promise<void> {
  const object = await store.stat(file.path);
  if (object?.size === file.size) return;
  const found = object ? `${object.size} bytes` : 'nothing';
  logger.error(`listing ${listing.id} (${listing.mode}): "${file.path}" holds ${found}, ${file.size} bytes were published; not served`);
  throw new ApiError(
    409,
    'file_mismatch',
    `The stored file "${file.name}" is not the one published (${file.size} bytes${file.sha256 ? `, sha256 ${file.sha256}` : ''}; storage holds ${found}), so it is not served. This has been logged.`,
  );
}
