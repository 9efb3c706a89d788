import { CancelledError, DeadlineExceededError, UnavailableError, type AllStreamResolvedEvent, type ResolvedEvent } from '@kurrent/kurrentdb-client';
import { EventStoreUnavailableError, RecordedEvent, toPosition } from '../event-store';

/** The client's event as the port's; null when it carries no event or no position. */
export function toRecorded(resolved: ResolvedEvent | AllStreamResolvedEvent): RecordedEvent | null {
  const e = resolved.event;
  if (!e || !e.position) return null;
  const metadata = e.metadata instanceof Uint8Array || !e.metadata ? {} : (e.metadata as Record<string, unknown>);
  return {
    id: e.id,
    streamId: e.streamId,
    revision: Number(e.revision),
    type: e.type,
    data: e.data,
    metadata,
    position: toPosition(e.position.commit, e.position.prepare),
    createdAt: e.created instanceof Date ? e.created : new Date(e.created as any),
  };
}

/** The client's "no answer" errors as the port's, so a command answers 503, not 500. */
export function asUnavailable(error: unknown, what: string): unknown {
  if (error instanceof UnavailableError || error instanceof DeadlineExceededError || error instanceof CancelledError) {
    return new EventStoreUnavailableError(`${what}: ${error.message}`);
  }
  return error;
}
