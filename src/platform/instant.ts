import { Errors } from './errors';

/** ISO 8601: a date (midnight UTC), or a date and time with an optional fraction and offset (UTC without one). */
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * An instant given as a query parameter (`as_of`, `from`, `to`): undefined when absent,
 * 400 `validation_failed` naming the field for anything but ISO 8601 or an impossible date.
 * With `requireOffset`, a date-time without an offset (Z or +hh:mm) is refused too, instead of
 * being read as UTC: the books' cut-offs (a date alone is still midnight UTC).
 */
export function instantParam(field: string, raw: unknown, options: { requireOffset?: boolean } = {}): Date | undefined {
  if (raw === undefined) return undefined;
  const match = typeof raw === 'string' ? ISO_8601.exec(raw) : null;
  if (match && match[4] && !match[7] && options.requireOffset) {
    throw Errors.validationFailed(`Invalid field "${field}": a date-time needs an offset (Z or +hh:mm), such as 2026-09-30T23:59:59Z; it is never taken as UTC silently.`);
  }
  const text = match && !match[4] ? `${raw}T00:00:00Z` : match && !match[7] ? `${raw}Z` : raw;
  const at = match ? new Date(text as string) : undefined;
  // Date rolls 2026-02-30 over to March: an instant is valid only when its date reads back the same.
  const sameDate = at && !Number.isNaN(at.getTime()) && (match![7] || at.toISOString().slice(0, 10) === `${match![1]}-${match![2]}-${match![3]}`);
  if (!at || !sameDate) {
    throw Errors.validationFailed(`Invalid field "${field}": must be an ISO 8601 date or date-time, such as 2026-09-30T23:59:59Z.`);
  }
  return at;
}

/**
 * A cut-off of the books (`as_of`, `from`, `to` of the balance, the trial balance, the journal
 * and reconciliation): one rule everywhere (issue 38, defect 7). `as_of` and `to` mean
 * "recorded strictly before", `from` "at or after": the trial balance as of R is the journal up
 * to R, and adjoining periods share no posting. A date-time needs its offset.
 */
export function cutoffParam(field: string, raw: unknown): Date | undefined {
  return instantParam(field, raw, { requireOffset: true });
}
