import { Errors } from '../platform/errors';
import type { ListingState } from './listing';
import { userPrefix } from './upload-policy';

/**
 * Issue 41: a shard name is a relative path, as datasets are kept on disk
 * ("data/chunk-000/episode_000000.parquet"): segments of [A-Za-z0-9._-], none "." or "..",
 * no leading "/", no backslash, at most MAX_SHARD_DEPTH segments and MAX_SHARD_NAME
 * characters. The same rule keeps the storage key under the dataset's prefix.
 */
export const MAX_SHARD_NAME = 512;
export const MAX_SHARD_DEPTH = 16;
const SEGMENT = /^[A-Za-z0-9._-]+$/;

/** Why name is not a shard name, or undefined when it is one. */
export function shardNameProblem(name: string): string | undefined {
  if (!name) return 'it is empty';
  if (name.length > MAX_SHARD_NAME) return `it is ${name.length} characters, more than ${MAX_SHARD_NAME}`;
  if (name.includes('\\')) return 'it holds a backslash; separate folders with "/"';
  if (name.startsWith('/')) return 'it starts with "/"; give the path relative to the dataset';
  const segments = name.split('/');
  if (segments.length > MAX_SHARD_DEPTH) return `it is ${segments.length} levels deep, more than ${MAX_SHARD_DEPTH}`;
  for (const segment of segments) {
    if (segment === '') return 'it holds an empty folder name ("//" or a trailing "/")';
    if (segment === '.' || segment === '..') return `it holds a "${segment}" segment`;
    if (!SEGMENT.test(segment)) return `"${segment}" holds characters other than letters, digits, ".", "_" and "-"`;
  }
  return undefined;
}

export function assertShardName(name: string, field = 'name'): void {
  const problem = shardNameProblem(name);
  if (problem) {
    throw Errors.validationFailed(
      `Invalid field "${field}": a shard name is a relative path of up to ${MAX_SHARD_DEPTH} folders and ${MAX_SHARD_NAME} characters, ` +
        `each segment letters, digits, ".", "_" and "-" (not "." or ".."), and ${problem}.`,
    );
  }
}

/** A list's prefix= filter: the start of a shard name ("data/", "data/chunk-0"), held to the same characters. */
export function assertShardPrefix(prefix: string): void {
  if (prefix === '') return;
  // Any prefix of a valid name is a valid name once a last letter is added ("data/" + "x").
  assertShardName(prefix.endsWith('/') ? `${prefix}x` : prefix, 'prefix');
}

/** Shards live under the owner's own prefix, one folder per dataset; a name's folders are kept under it. */
export function shardPrefix(dataset: Pick<ListingState, 'account_id' | 'id'>): string {
  return `${userPrefix(dataset.account_id)}datasets/${dataset.id}/`;
}
