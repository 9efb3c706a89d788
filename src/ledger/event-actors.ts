/** The name of the read model of who recorded each money event (projections/event-actors.projection.ts). */
export const EVENT_ACTORS_READ_MODEL = 'event_actors';

/** Who recorded a posting's event, and why: null for events recorded outside a request, or before actors were recorded. */
export interface PostingActor {
  actor: string | null;
  actor_type: 'operator' | 'api_key' | null;
  reason: string | null;
  request_id: string | null;
}

/**
 * The journal's postings with their event's actor: a LEFT JOIN on event_actors, kept apart
 * from journal_postings so the journal's own read model (and its rebuilds) did not change.
 * `postings` is the FROM clause's journal_postings, as the caller wrote it.
 */
export const WITH_ACTORS = `LEFT JOIN event_actors ea ON ea.event_id = journal_postings.event_id`;
// Aliased: journal_postings has actor and reason columns of its own (a manual entry's, from its event's data).
export const ACTOR_COLUMNS = `ea.actor AS event_actor, ea.actor_type AS event_actor_type, ea.reason AS event_reason, ea.request_id AS event_request_id`;

/** The event's metadata first; a manual entry recorded before actors were kept still has its own. */
export const toPostingActor = (row: any): PostingActor => ({
  actor: row.event_actor ?? row.actor ?? null,
  actor_type: row.event_actor_type ?? null,
  reason: row.event_reason ?? row.reason ?? null,
  request_id: row.event_request_id ?? null,
});
