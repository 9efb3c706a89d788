import { AsyncLocalStorage } from 'node:async_hooks';
import { Errors } from './errors';

/** Who issued a command: a named operator (or the bootstrap `admin`), or an API key (its id). */
export interface Actor {
  type: 'operator' | 'api_key';
  /** The operator's name, or the API key's id. */
  id: string;
}

/**
 * What is known of the request being handled: its id (set when it arrives), who sent it (set
 * once its credentials are checked) and, for a command that takes one, the reason given.
 * Kept in AsyncLocalStorage, so the event store stamps every event a request appends without
 * any handler passing it along (events-metadata in docs/events.md).
 */
interface RequestContext {
  requestId: string;
  actor?: Actor;
  reason?: string;
}

const context = new AsyncLocalStorage<RequestContext>();

/** Runs fn (the rest of a request's handling) inside a fresh context for that request. */
export function runInRequestContext<T>(requestId: string, fn: () => T): T {
  return context.run({ requestId }, fn);
}

/** Runs fn outside any request (a batch of many requests' items, a timer): what it appends carries no request's actor. */
export function outsideRequestContext<T>(fn: () => T): T {
  return context.exit(fn);
}

/**
 * Runs fn, a consequence a subscriber records of an event (the ledger's refund of a refunded
 * purchase), as part of the request that recorded the cause: what it appends carries the
 * cause's actor, request id and reason. A cause recorded outside a request gives none.
 */
export function asConsequenceOf<T>(cause: { metadata?: Record<string, unknown> }, fn: () => T): T {
  const m = cause.metadata ?? {};
  if (typeof m.request_id !== 'string') return context.exit(fn);
  const type = m.actor_type === 'operator' || m.actor_type === 'api_key' ? (m.actor_type as Actor['type']) : undefined;
  const actor: Actor | undefined = type && typeof m.actor === 'string' ? { type, id: m.actor } : undefined;
  return context.run({ requestId: m.request_id, actor, reason: typeof m.reason === 'string' ? m.reason : undefined }, fn);
}

export function currentRequestId(): string | undefined {
  return context.getStore()?.requestId;
}

/** The request's caller, once authenticated; a no-op outside a request. */
export function setActor(actor: Actor): void {
  const store = context.getStore();
  if (store) store.actor = actor;
}

export function currentActor(): Actor | undefined {
  return context.getStore()?.actor;
}

/** The longest reason kept (a sentence or a ticket reference, not a document). */
export const MAX_REASON = 500;

/**
 * The reason a command was given, recorded in the metadata of the events it appends. Named
 * operators must give one (400 validation_failed naming `reason`); the bootstrap operator
 * `admin` (automation, the first operator) may leave it out (docs/decisions.md).
 */
export function recordReason(reason: unknown): void {
  const given = typeof reason === 'string' ? reason.trim() : '';
  const actor = currentActor();
  if (!given) {
    if (actor?.type === 'operator' && actor.id !== BOOTSTRAP_OPERATOR) {
      throw Errors.validationFailed('Invalid field "reason": required: say why (a ticket, a sentence); it is kept with the events this command records.');
    }
    return;
  }
  if (given.length > MAX_REASON) throw Errors.validationFailed(`Invalid field "reason": must be at most ${MAX_REASON} characters.`);
  const store = context.getStore();
  if (store) store.reason = given;
}

/** The operator the bootstrap ADMIN_TOKEN signs in as. */
export const BOOTSTRAP_OPERATOR = 'admin';

/**
 * The metadata an event appended now carries: who, in which request, and why. Events
 * appended outside a request (subscribers, sweeps, the CLI's copies) carry what they were
 * given. Metadata given with the event (a copy keeps its original's) is kept as it is.
 */
export function attributed(metadata: Record<string, unknown> | undefined): Record<string, unknown> {
  if (metadata) return metadata;
  const store = context.getStore();
  if (!store) return {};
  return {
    actor: store.actor?.id ?? null,
    actor_type: store.actor?.type ?? null,
    request_id: store.requestId,
    ...(store.reason ? { reason: store.reason } : {}),
  };
}
