import type { Database } from '../database/database';
import type { EventStore, Position } from '../event-store/event-store';
import type { Projection } from './projection';
import type { ReadModelBuilds } from './read-model-builds';

export interface ConsumerHealth {
  /** The instance whose lease runs it ("host:pid:id"), or null when nobody does. */
  leader: string | null;
  /** Events it set aside (`svc projections parked`). */
  parked: number;
  /** The last failure it has not got past, or null. */
  error: { message: string; event_id: string; attempts: number } | null;
  /** Set while a consumer that never skips (money) is stopped on an event. */
  stalled_since: string | null;
}

/**
 * How far a consumer is behind the log, from its position alone (issue 13): one read of the
 * event after it, on either adapter and however far behind. Counting the events left is
 * not cheap on EventStoreDB (its positions are byte offsets), and the age of what is left
 * is what a reader of a read model feels.
 */
export interface Lag {
  /** Some event after its position has not been read yet (of any type: it reads them all). */
  behind: boolean;
  /** Age of the oldest event it has not read yet, in seconds (to the millisecond; EventStoreDB's times are whole seconds); 0 when not behind. */
  lag_seconds: number;
}

export interface ProjectionStatus extends ConsumerHealth, Lag {
  name: string;
  version: number;
  /** The build that serves queries (its checkpoint name). */
  build: string | null;
  position: Position;
  updated_at: string;
  /** A build catching up beside the live one, which replaces it when it has caught up. */
  rebuilding: ({ build: string; version: number; position: Position } & Lag) | null;
}

export interface SubscriberStatus extends ConsumerHealth, Lag {
  name: string;
  position: Position;
  updated_at: string;
}

/** The lag of a consumer at `position`: one read of the event after it. */
export async function lagAfter(store: EventStore, position: Position): Promise<Lag> {
  const [oldest] = await store.readAll({ after: position, limit: 1 });
  if (!oldest) return { behind: false, lag_seconds: 0 };
  // Timestamped by the event store's clock: a skewed one must not make the lag negative.
  return { behind: true, lag_seconds: Math.max(0, Date.now() - oldest.createdAt.getTime()) / 1000 };
}

interface StatusSources {
  db: Database;
  store: EventStore;
  projections: readonly Projection[];
  builds: ReadModelBuilds;
  /** Where a consumer running in this process has read to (it may be further than it stored). */
  localPosition(name: string): Position | undefined;
}

/** Every projection's serving build (and the one rebuilding beside it) and every subscriber: position, lag and health. */
export async function readStatus({ db, store, projections, builds, localPosition }: StatusSources): Promise<{ items: ProjectionStatus[]; subscribers: SubscriberStatus[] }> {
  const { rows } = await db.query<{
    name: string;
    position: string;
    updated_at: Date;
    error: string | null;
    error_event_id: string | null;
    error_count: number;
    stalled_since: Date | null;
    leader: string | null;
    parked: string;
  }>(
    `SELECT c.name, c.position, c.updated_at, c.error, c.error_event_id::text, c.error_count, c.stalled_since,
            (SELECT owner FROM consumer_leases l WHERE l.name = c.name AND l.expires_at > clock_timestamp()) AS leader,
            (SELECT count(*) FROM parked_events p WHERE p.consumer = c.name) AS parked
       FROM projection_checkpoints c`,
  );
  const checkpoints = new Map(rows.map((r) => [r.name, r]));
  // Consumers at the head share one position: one read of the log answers for all of them.
  const lags = new Map<Position, Promise<Lag>>();
  const lagAt = (position: Position) => {
    if (!lags.has(position)) lags.set(position, lagAfter(store, position));
    return lags.get(position)!;
  };
  const progress = async (name: string) => {
    const r = checkpoints.get(name)!;
    // A consumer running here may be further than it stored: it stores progress over
    // events of no concern to it only now and then (within a second), which is all a
    // consumer running elsewhere can show behind while it is in fact current.
    const local = localPosition(name);
    const position = local && local > r.position ? local : r.position;
    return { position, ...(await lagAt(position)), updated_at: new Date(r.updated_at).toISOString() };
  };
  const health = (name: string): ConsumerHealth => {
    const r = checkpoints.get(name)!;
    return {
      leader: r.leader,
      parked: Number(r.parked),
      error: r.error ? { message: r.error, event_id: r.error_event_id!, attempts: r.error_count } : null,
      stalled_since: r.stalled_since && new Date(r.stalled_since).toISOString(),
    };
  };
  const all = await builds.list();
  const items: ProjectionStatus[] = [];
  for (const projection of projections) {
    const live = all.find((b) => b.projection === projection.name && b.state === 'live' && checkpoints.has(b.id));
    const next = all.find((b) => b.projection === projection.name && b.state === 'building' && checkpoints.has(b.id));
    if (!live && !next) continue;
    const shown = live ?? next!;
    items.push({
      name: projection.name,
      version: shown.version,
      build: live?.id ?? null,
      ...(await progress(shown.id)),
      ...health(shown.id),
      rebuilding: next && live ? { build: next.id, version: next.version, ...(await progress(next.id)) } : null,
    });
  }
  const subscribers: SubscriberStatus[] = [];
  for (const name of [...checkpoints.keys()].filter((n) => n.startsWith('subscriber:')).sort()) {
    subscribers.push({ name, ...(await progress(name)), ...health(name) });
  }
  return { items: items.sort((a, b) => a.name.localeCompare(b.name)), subscribers };
}
