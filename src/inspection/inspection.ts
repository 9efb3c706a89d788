/**
 * What inspection of one published file finds (issue 40, docs/catalog.md): `format` names
 * the format its bytes were read as ("opaque" when the format cannot be checked), the rest
 * is what the format's reader showed. Stored in ListingPublished with the file, shown on
 * the listing before purchase, so every field is plain JSON and lists are capped.
 */
export interface Inspection {
  format: string;
  [field: string]: unknown;
}

/** Why a file failed inspection; `code` is stable, `message` names the file. */
export interface InspectionProblem {
  code: string;
  message: string;
}

/** The bounds of one file's inspection (Settings.inspection). */
export interface InspectionLimits {
  /** Bytes read from storage at most. */
  maxReadBytes: number;
  /** Time spent at most, in ms: an elapsed-time bound, so it also bounds the CPU one inspection takes. */
  timeMs: number;
}

export const DEFAULT_LIMITS: InspectionLimits = { maxReadBytes: 64 * 1024 ** 2, timeMs: 10_000 };

/** Lists on an inspection (tensors, meshes, archive entries) show at most this many items. */
export const LIST_CAP = 1000;

/**
 * The file is not what its extension says, is unsafe, or could not be read within the
 * limits. Inspectors throw it with the reason; the registry prefixes the file's name.
 */
export class InspectionError extends Error {
  constructor(readonly code: InspectionCode, message: string) {
    super(message);
    this.name = 'InspectionError';
  }
}

export type InspectionCode =
  /** The bytes are not the format the extension names (truncated, mislabelled, corrupt). */
  | 'invalid_format'
  /** A pickle imports something outside the tensor-rebuilding allowlist. */
  | 'unsafe_pickle'
  /** XML declaring entities (entity bombs, external entities). */
  | 'unsafe_xml'
  /** An archive whose sizes or layout would expand without bound. */
  | 'archive_bomb'
  /** Inspecting the file needs more bytes or time than the limits allow. */
  | 'inspection_limit_exceeded';

/** Throws invalid_format with reason unless condition holds. */
export function expect(condition: unknown, reason: string): asserts condition {
  if (!condition) throw new InspectionError('invalid_format', reason);
}

/** The first n items of a list, for an inspection's JSON. */
export function capped<T>(items: T[], n = LIST_CAP): T[] {
  return items.length > n ? items.slice(0, n) : items;
}
