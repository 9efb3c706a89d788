import { Errors } from './errors';

/** ISO 8601: a date (midnight UTC), or a date and time with an optional fraction and offset (UTC without one). */
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * An instant given as a query parameter (`as_of`, `from`, `to`): undefined when absent,
 * 400 `validation_failed` naming the field for anything but ISO 8601 or an impossible date.
 */
export function instantParam(field: string, raw: unknown): Date | undefined {
  if (raw === undefined) return undefined;
  const match = typeof raw === 'string' ? ISO_8601.exec(raw) : null;
  const text = match && !match[4] ? `${raw}T00:00:00Z` : match && !match[7] ? `${raw}Z` : raw;
  const at = match ? new Date(text as string) : undefined;
  // Date rolls 2026-02-30 over to March: an instant is valid only when its date reads back the same.
  const sameDate = at && !Number.isNaN(at.getTime()) && (match![7] || at.toISOString().slice(0, 10) === `${match![1]}-${match![2]}-${match![3]}`);
  if (!at || !sameDate) {
    throw Errors.validationFailed(`Invalid field "${field}": must be an ISO 8601 date or date-time, such as 2026-09-30T23:59:59Z.`);
  }
  return at;
}
