import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { DATABASE, Database } from '../database/database';
import type { Mode } from '../platform/mode';
import type { BlobStore, ObjectDigest, StoredObject } from '../storage/blob-store';

/**
 * The sha256 of a draft's shards (issue 41), computed by the service once per version of
 * each object and kept in shard_checksums. A list hashes small shards at once, within a
 * byte budget per request, and hands the rest (large shards, or past the budget) to one
 * background worker, so a list never waits on a large read: such a shard shows
 * `sha256: null` until its hash is in. Published shards carry the sha256 frozen at publish.
 */
export const INLINE_HASH_MAX_BYTES = 16 * 1024 ** 2;
export const INLINE_HASH_BUDGET_BYTES = 64 * 1024 ** 2;
/** Small shards a list reads at once to hash them. */
const INLINE_HASH_PARALLEL = 8;

interface Pending {
  mode: Mode;
  store: BlobStore;
  object: StoredObject;
}

@Injectable()
export class ShardChecksums implements OnModuleDestroy {
  private readonly logger = new Logger('ShardChecksums');
  private readonly queue = new Map<string, Pending>();
  private running?: Promise<void>;
  private closed = false;

  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /**
   * The sha256 of each object by path, where known or cheap to learn now; large ones are
   * queued. The small ones are read INLINE_HASH_PARALLEL at a time and remembered in one
   * statement: a list of a thousand new small shards costs a thousand reads, not a thousand
   * round trips to the database one after another (bench/dataset-upload.js).
   */
  async of(mode: Mode, store: BlobStore, objects: StoredObject[]): Promise<Map<string, string>> {
    const known = await this.known(mode, objects);
    let budget = INLINE_HASH_BUDGET_BYTES;
    const inline: StoredObject[] = [];
    for (const object of objects) {
      if (known.has(object.path)) continue;
      if (object.size <= INLINE_HASH_MAX_BYTES && object.size <= budget) {
        budget -= object.size;
        inline.push(object);
      } else {
        this.enqueue({ mode, store, object });
      }
    }
    const digests: ObjectDigest[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(INLINE_HASH_PARALLEL, inline.length) }, async () => {
        for (let i = next++; i < inline.length; i = next++) {
          const digest = await store.digest(inline[i].path);
          // Written again since it was listed: the version hashed is not the one shown.
          if (digest && digest.version === inline[i].version) digests.push(digest);
        }
      }),
    );
    await this.remember(mode, digests);
    for (const digest of digests) known.set(digest.path, digest.sha256);
    return known;
  }

  /** Stops the background worker after the hash in progress. */
  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    this.queue.clear();
    await this.running;
  }

  private async known(mode: Mode, objects: StoredObject[]): Promise<Map<string, string>> {
    const known = new Map<string, string>();
    if (!objects.length) return known;
    const { rows } = await this.db.query<{ path: string; version: string; sha256: string }>(
      'SELECT path, version, sha256 FROM shard_checksums WHERE mode = $1 AND path = ANY($2::text[])',
      [mode, objects.map((o) => o.path)],
    );
    const versions = new Map(objects.map((o) => [o.path, o.version]));
    for (const row of rows) if (versions.get(row.path) === row.version) known.set(row.path, row.sha256);
    return known;
  }

  private async remember(mode: Mode, digests: ObjectDigest[]): Promise<void> {
    if (!digests.length) return;
    await this.db.query(
      `INSERT INTO shard_checksums (mode, path, version, size, sha256)
       SELECT $1, path, version, size, sha256 FROM unnest($2::text[], $3::text[], $4::bigint[], $5::text[]) AS d(path, version, size, sha256)
       ON CONFLICT (mode, path) DO UPDATE SET version = EXCLUDED.version, size = EXCLUDED.size, sha256 = EXCLUDED.sha256, computed_at = now()`,
      [mode, digests.map((d) => d.path), digests.map((d) => d.version), digests.map((d) => d.size), digests.map((d) => d.sha256)],
    );
  }

  private enqueue(pending: Pending): void {
    if (this.closed) return;
    this.queue.set(`${pending.mode}:${pending.object.path}`, pending);
    this.running ??= this.drain().finally(() => (this.running = undefined));
  }

  /** One shard at a time: a background hash reads storage at one stream's pace, never more. */
  private async drain(): Promise<void> {
    for (const [key, pending] of this.queue) {
      this.queue.delete(key);
      if (this.closed) return;
      try {
        const digest = await pending.store.digest(pending.object.path);
        if (digest) await this.remember(pending.mode, [digest]);
      } catch (error) {
        this.logger.warn(`could not hash ${pending.object.path} (${pending.mode}): ${(error as Error).message}`);
      }
    }
  }
}
