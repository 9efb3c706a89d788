import { Inject, Injectable } from '@nestjs/common';
import { BLOB_STORE, BlobStore } from '../storage/blob-store';
import { blobsOfMode } from '../storage/mode-staging';
import { BuiltArtifact, sha256 } from './assets/artifact';
import type { JobArtifact } from './events';
import type { JobState } from './job.decider';

/**
 * Stores a build under the creator's own prefix (user/<account>/, where publish expects a
 * seller's files) at a key fixed by job and build: a worker that dies after storing and
 * builds again on restart writes the same bytes to the same key, so one artifact remains.
 */
@Injectable()
export class ArtifactStore {
  constructor(@Inject(BLOB_STORE) private readonly blobs: BlobStore) {}

  async store(job: JobState, built: BuiltArtifact): Promise<JobArtifact> {
    const prefix = `user/${job.account_id}/factory/${job.id}/build-${job.build}/`;
    const put = async (name: string, bytes: Uint8Array) => {
      const stored = await blobsOfMode(this.blobs, job.mode).put(`${prefix}${name}`, bytes);
      return { file_name: name, storage_path: stored.path, size: stored.size, sha256: sha256(bytes) };
    };
    const main = await put(built.main.name, built.main.bytes);
    const companions = [];
    for (const file of built.companions) companions.push(await put(file.name, file.bytes));
    return { ...main, companions };
  }
}
