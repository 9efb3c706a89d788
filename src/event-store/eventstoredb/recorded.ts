import { AccessDeniedError, CancelledError, DeadlineExceededError, NotLeaderError, TimeoutError, UnavailableError, UnknownError, type AllStreamResolvedEvent, type ResolvedEvent } from '@kurrent/kurrentdb-client';
import { EventStoreAccessDeniedError, EventStoreUnavailableError, RecordedEvent, toPosition } from '../event-store';

/**
 * The client's event as the port's; null when it carries no event or no position, or is
 * one of the server's own records ("$"-typed, such as the "$streamDeleted" a tombstone
 * leaves in $all under the deleted stream's name, which the stream-name filter lets through).
 */
export function toRecorded(resolved: ResolvedEvent | AllStreamResolvedEvent): RecordedEvent | null {
  const e = resolved.event;
  if (!e || !e.position || e.type.startsWith('$')) return null;
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

/** gRPC status codes of a call the server never answered (some client paths pass the raw gRPC error on). */
const GRPC_UNAVAILABLE = 14;
const GRPC_DEADLINE_EXCEEDED = 4;
const GRPC_CANCELLED = 1;

/**
 * The client's native read path reports a call cut by the connection (a node going down
 * mid-read) as an unmapped error: "code: The operation was cancelled, message: h2 protocol error".
 */
const CUT_MID_CALL = /operation was cancelled|h2 protocol error|connection (reset|refused|closed)/i;

/**
 * A node's refusals that the client passes on as unknown errors: BatchAppend answers "not
 * ready" and "busy" as a status with an empty detail ("Could not recognize Server Is Not
 * Ready"), and a plain Append's commit timeout comes as ABORTED without details
 * ("Operation timed out: ..."), which the client maps to UnknownError, not TimeoutError.
 */
const REFUSED = /Server Is (Not Ready|Busy|Too Busy)|Operation timed out/i;

/**
 * The server gave no outcome: it did not answer, the connection was cut mid-call (down,
 * restarting, unreachable), it was not ready or too busy (every start and restart passes
 * through that), it is not the leader (the client reconnects to the one it names), or the
 * write timed out: worth the same call again. A timeout may come after the write was made:
 * the same call again is then the same write only where the server recognises its event
 * ids (see rideOut).
 */
export function isUnanswered(error: unknown): error is Error {
  if (error instanceof UnavailableError || error instanceof DeadlineExceededError || error instanceof CancelledError) return true;
  if (error instanceof NotLeaderError || error instanceof TimeoutError) return true;
  if (error instanceof UnknownError && (CUT_MID_CALL.test(error.message) || REFUSED.test(error.message))) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && (code === GRPC_UNAVAILABLE || code === GRPC_DEADLINE_EXCEEDED || code === GRPC_CANCELLED);
}

/**
 * A secured server's refusal (AccessDenied) as the port's, saying what was refused and, when
 * given, what the call needs ("a user in $admins"); else that the user lacks access to it.
 */
export function explainDenied(error: unknown, what: string, needs?: string): unknown {
  if (!(error instanceof AccessDeniedError) && !(error instanceof EventStoreAccessDeniedError)) return error;
  const why = needs ?? 'that user lacks access to it (the stream\'s ACL, or the server\'s default ACLs)';
  return new EventStoreAccessDeniedError(`${what} was refused (AccessDenied) to the user the service connects as (the user in EVENTSTORE_URL): ${why}`);
}

/** The client's "no answer" errors as the port's, so a command answers 503, not 500; an AccessDenied explained (explainDenied). */
export function asUnavailable(error: unknown, what: string): unknown {
  if (error instanceof AccessDeniedError) return explainDenied(error, what);
  if (isUnanswered(error)) {
    return new EventStoreUnavailableError(`${what}: ${(error as Error).message}`);
  }
  return error;
}
