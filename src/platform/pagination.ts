import { Errors } from './errors';

/**
 * Parses an integer query parameter that is clamped to [min, max] when out of range, not
 * rejected (spec part 8, `limit`; decisions section 8, `days`); something that is not an
 * integer is a validation error naming it.
 */
export function parseClampedInteger(name: string, raw: unknown, options: { fallback: number; min?: number; max: number }): number {
  if (raw === undefined || raw === null || raw === '') return options.fallback;
  const text = String(raw).trim();
  if (!/^-?\d+$/.test(text)) throw Errors.validationFailed(`Invalid field "${name}": must be an integer.`);
  return Math.min(options.max, Math.max(options.min ?? 1, Number(text)));
}

export function parseLimit(raw: unknown, options: { fallback: number; max: number }): number {
  return parseClampedInteger('limit', raw, options);
}

const ID_SHAPE = /^[a-z]+_[A-Za-z0-9]{1,64}$/;

/**
 * The cursor is the id of the last item of the previous page (spec part 2), opaque to
 * clients. List queries resume after that item's sort key (keyset pagination) and answer
 * 400 when the id is not one of theirs.
 */
export function parseCursor(raw: unknown): string | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  const text = String(raw);
  if (!ID_SHAPE.test(text)) throw invalidCursor();
  return text;
}

export function invalidCursor() {
  return Errors.validationFailed('Invalid field "cursor": not a cursor this list returned.');
}

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
  has_more: boolean;
}

/** Builds a page from rows fetched with LIMIT limit + 1: the extra row only says there is more. */
export function toPage<R extends { id: string }, T>(rows: R[], limit: number, render: (row: R) => T): Page<T> {
  const hasMore = rows.length > limit;
  const visible = hasMore ? rows.slice(0, limit) : rows;
  return {
    items: visible.map(render),
    next_cursor: hasMore ? visible[visible.length - 1].id : null,
    has_more: hasMore,
  };
}
