import { Errors } from './errors';

/** The creation-time filters every list that has a creation time takes (Stripe's `created[...]`). */
export const CREATED_PARAMETERS = ['created[gt]', 'created[gte]', 'created[lt]', 'created[lte]'] as const;

type Bound = 'gt' | 'gte' | 'lt' | 'lte';
const OPERATORS: Record<Bound, string> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };

/** One bound of a creation-time range: `column op at`. */
export interface CreatedBound {
  op: '>' | '>=' | '<' | '<=';
  at: Date;
}

/** A date-time with seconds optional, a fraction and an offset that is required: Z, +hh:mm or +hhmm. */
const ISO_WITH_OFFSET = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;
/** An ISO 8601 date or date-time without an offset: refused, naming the field, rather than taken as UTC. */
const ISO_WITHOUT_OFFSET = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)?$/i;

/**
 * A bound on an instant that names a whole unit (a second, a millisecond): `gt` and `lte`
 * mean after / up to the end of that unit, whatever precision the column keeps (Postgres keeps
 * microseconds; the API prints milliseconds, or unix seconds for events).
 */
function over(which: Bound, start: Date, unitMs: number): CreatedBound {
  if (which === 'gt') return { op: '>=', at: new Date(start.getTime() + unitMs) };
  if (which === 'lte') return { op: '<', at: new Date(start.getTime() + unitMs) };
  return { op: OPERATORS[which] as CreatedBound['op'], at: start };
}

/**
 * A `created[...]` value: unix seconds (the events' `created`, Stripe's filter), naming a whole
 * second, or an ISO 8601 date-time with an offset, naming its millisecond (the precision the
 * API prints `created_at` in: a value read from a list bounds that item exactly).
 */
function bound(field: string, which: Bound, raw: unknown): CreatedBound {
  // Ten digits (2001-09-09 to 2286): `created[gte]=2026`, a year, must not read as 1970.
  if (typeof raw === 'string' && /^\d{10}$/.test(raw)) return over(which, new Date(Number(raw) * 1000), 1000);
  const match = typeof raw === 'string' ? ISO_WITH_OFFSET.exec(raw) : null;
  const at = match ? new Date(raw as string) : undefined;
  // Date rolls 2026-02-30 over to March: the date must read back the same (in its own offset, so compare the fields).
  const real = at && !Number.isNaN(at.getTime()) && Number(match![2]) <= 12 && Number(match![3]) <= new Date(Date.UTC(Number(match![1]), Number(match![2]), 0)).getUTCDate();
  if (at && real) return over(which, at, 1);
  if (typeof raw === 'string' && ISO_WITHOUT_OFFSET.test(raw)) {
    throw Errors.validationFailed(`Invalid field "${field}": must be unix seconds or an ISO 8601 date-time with an offset (Z or +02:00, such as 2026-01-01T00:00:00Z); "${raw}" has no offset.`);
  }
  if (Array.isArray(raw)) throw Errors.validationFailed(`Invalid field "${field}": give it once.`);
  throw Errors.validationFailed(`Invalid field "${field}": must be unix seconds (ten digits, such as 1767225600) or an ISO 8601 date-time with an offset (such as 2026-01-01T00:00:00Z).`);
}

/** The `created[gt|gte|lt|lte]` bounds given in a query; each one refused (400 naming it) when it is not an instant. */
export function createdRange(query: Record<string, unknown>): CreatedBound[] {
  const bounds: CreatedBound[] = [];
  for (const which of Object.keys(OPERATORS) as Bound[]) {
    const field = `created[${which}]`;
    const raw = query[field];
    if (raw !== undefined) bounds.push(bound(field, which, raw));
  }
  return bounds;
}

/** The range as SQL over `column` (a timestamptz), each instant bound through `param`; empty when no bound was given. */
export function createdSql(bounds: readonly CreatedBound[], column: string, param: (value: unknown) => string): string[] {
  return bounds.map((b) => `${column} ${b.op} ${param(b.at.toISOString())}`);
}
