import { Controller, Get, Param, Query } from '@nestjs/common';
import { Auth, AuthContext, RequireScope } from '../platform/auth/auth-context';
import { Errors } from '../platform/errors';
import { createdRange, CREATED_PARAMETERS } from '../platform/created-range';
import { QueryParameters } from '../platform/known-parameters';
import { parseCursor, parseLimit } from '../platform/pagination';
import { EventQueries } from './event-queries';
import { isPublicEventType, PUBLIC_EVENT_TYPES, PublicEventType } from './public-events';

const PAGE = { fallback: 20, max: 100 };

/** One type, or several comma-separated; an unknown one is refused, not ignored, since it would match nothing. */
function typesParam(raw: unknown): PublicEventType[] | undefined {
  if (raw === undefined) return undefined;
  const types = typeof raw === 'string' ? raw.split(',').map((s) => s.trim()) : [];
  const unknown = types.find((type) => !isPublicEventType(type));
  if (!types.length || unknown !== undefined) {
    const what = typeof raw === 'string' ? `"${unknown}" is not an event type` : 'give several types comma-separated, in one parameter';
    throw Errors.validationFailed(`Invalid field "type": ${what}; one or more of ${PUBLIC_EVENT_TYPES.join(', ')}.`);
  }
  return types as PublicEventType[];
}

/**
 * The events of the caller's account in the key's mode, as webhooks send them (Stripe's
 * /v1/events): what a receiver that was down catches up from. Scope: webhooks:write, the
 * scope that can already route every one of these events to a URL of its choosing
 * (docs/decisions.md, "Events API").
 */
@Controller('v1')
@RequireScope('webhooks:write')
export class EventsController {
  constructor(private readonly events: EventQueries) {}

  @Get('events')
  @QueryParameters('type', 'limit', 'cursor', ...CREATED_PARAMETERS)
  list(@Auth() auth: AuthContext, @Query() query: Record<string, unknown>) {
    return this.events.list(auth, {
      types: typesParam(query.type),
      created: createdRange(query),
      limit: parseLimit(query.limit, PAGE),
      cursor: parseCursor(query.cursor),
    });
  }

  /** Ids are opaque: one that names nothing of the caller's is 404, whatever its shape. */
  @Get('events/:id')
  async get(@Auth() auth: AuthContext, @Param('id') id: string) {
    const event = await this.events.find(auth, id);
    if (!event) throw Errors.notFound('event');
    return event;
  }
}
