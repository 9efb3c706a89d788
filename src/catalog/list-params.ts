import { createdRange, CREATED_PARAMETERS } from '../platform/created-range';
import { Errors } from '../platform/errors';
import { parseCursor, parseLimit } from '../platform/pagination';
import type { PublicListQuery } from './catalog-queries';
import type { ListingKind } from './events';
import type { AuthContext } from '../platform/auth/auth-context';

function optionalText(raw: unknown, field: string): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || raw.length > 200) throw Errors.validationFailed(`Invalid field "${field}": must be a string of at most 200 characters.`);
  return raw;
}

function optionalBoolean(raw: unknown, field: string): boolean | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw Errors.validationFailed(`Invalid field "${field}": must be true or false.`);
}

/** The query parameters of GET /v1/models and GET /v1/datasets (their @QueryParameters). */
export const PUBLIC_LIST_PARAMETERS = [
  'q', 'type', 'category', 'framework', 'hardware', 'sensor', 'ros_compatible', 'jetson_compatible', 'isaac_sim_compatible',
  ...CREATED_PARAMETERS, 'limit', 'cursor',
] as const;

/** The query string of GET /v1/models and GET /v1/datasets; facets are additive filters. */
export function publicListQuery(auth: AuthContext, kind: ListingKind, raw: Record<string, unknown>): PublicListQuery {
  return {
    mode: auth.mode,
    kind,
    q: optionalText(raw.q, 'q'),
    type: optionalText(raw.type, 'type'),
    category: optionalText(raw.category, 'category'),
    framework: optionalText(raw.framework, 'framework'),
    hardware: optionalText(raw.hardware, 'hardware'),
    sensor: optionalText(raw.sensor, 'sensor'),
    ros_compatible: optionalBoolean(raw.ros_compatible, 'ros_compatible'),
    jetson_compatible: optionalBoolean(raw.jetson_compatible, 'jetson_compatible'),
    isaac_sim_compatible: optionalBoolean(raw.isaac_sim_compatible, 'isaac_sim_compatible'),
    created: createdRange(raw),
    cursor: parseCursor(raw.cursor),
    limit: parseLimit(raw.limit, { fallback: 20, max: 100 }),
  };
}
