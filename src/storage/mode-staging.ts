import type { Mode } from '../platform/mode';
import type { BlobStore, StoredObject } from './blob-store';

/** Where clients' own files wait before a publish freezes them: user/<account_id>/... */
const STAGING_PREFIX = 'user/';
const TEST_PREFIX = 'test/';

/**
 * The store as one mode sees it. Accounts hold keys of both modes and a storage_path has the
 * same public shape in each (user/<account_id>/...), so test mode's staging keys live under
 * test/ in the bucket: a path staged by one mode is "not there" to the other. Live keeps
 * the keys it always had; frozen copies (published/<sha256>) are content-addressed,
 * immutable and recorded per listing, so they are shared.
 */
/** The storage_path a client was given for a bucket key (the local store's PUT answers it). */
export function stagingPathOf(key: string): string {
  return key.startsWith(TEST_PREFIX + STAGING_PREFIX) ? key.slice(TEST_PREFIX.length) : key;
}

export function blobsOfMode(store: BlobStore, mode: Mode): BlobStore {
  if (mode === 'live') return store;
  const inner = (path: string) => (path.startsWith(STAGING_PREFIX) ? `${TEST_PREFIX}${path}` : path);
  const outer = <T extends StoredObject>(object: T): T => ({ ...object, path: stagingPathOf(object.path) });
  return {
    signUpload: (path, options) => store.signUpload(inner(path), options),
    signDownload: (path, options) => store.signDownload(inner(path), options),
    stat: async (path) => {
      const object = await store.stat(inner(path));
      return object && outer(object);
    },
    put: async (path, bytes) => outer(await store.put(inner(path), bytes)),
    readRange: (path, offset, length) => store.readRange(inner(path), offset, length),
    list: async (prefix) => (await store.list(inner(prefix))).map(outer),
    digest: async (path) => {
      const digest = await store.digest(inner(path));
      return digest && outer(digest);
    },
    freeze: (path) => store.freeze(inner(path)),
    probe: (timeoutMs) => store.probe(timeoutMs),
    startMultipart: (path) => store.startMultipart(inner(path)),
    signPart: (path, uploadId, part, options) => store.signPart(inner(path), uploadId, part, options),
    completeMultipart: async (path, uploadId, parts) => outer(await store.completeMultipart(inner(path), uploadId, parts)),
    abortMultipart: (path, uploadId) => store.abortMultipart(inner(path), uploadId),
    sweepMultipart: (startedBefore) => store.sweepMultipart(startedBefore),
  };
}
