import { evolve, ListingState } from '../src/catalog/listing';
import { LISTING_EVENT_TYPES } from '../src/catalog/events';
import type { Queryable } from '../src/database/database';
import type { RecordedEvent } from '../src/event-store/event-store';
import type { Projection } from '../src/projection-runner/projection';

/**
 * Folds a batch of listing events onto the stored rows: one read and one write per listing
 * per batch, however many of its events the batch holds (a draft and its publish are one
 * write). Events at or below a row's stored revision are already applied.
 */
async function applyListingEvents(tx: Queryable, events: RecordedEvent[]): Promise<void> {
  const ids = [...new Set(events.map((e) => (e.data as { listing_id: string }).listing_id))];
  const { rows } = await tx.query<{ id: string; state: ListingState; revision: number }>(
    'SELECT id, state, revision FROM catalog_listings WHERE id = ANY($1::text[])',
    [ids],
  );
  const folded = new Map(rows.map((r) => [r.id, { state: r.state as ListingState | undefined, revision: r.revision, changed: false }]));
  for (const event of events) {
    const id = (event.data as { listing_id: string }).listing_id;
    const row = folded.get(id) ?? { state: undefined, revision: -1, changed: false };
    folded.set(id, row);
    if (row.revision >= event.revision) continue;
    const s = evolve(row.state, event);
    if (!s) continue;
    Object.assign(row, { state: s, revision: event.revision, changed: true });
  }
  const changed = [...folded.values()].filter((r) => r.changed && r.state);
  if (!changed.length) return;
  const records = changed.map(({ state: s, revision }) => ({
    id: s!.id, mode: s!.mode, account_id: s!.account_id, kind: s!.kind, slug: s!.slug, type: s!.type, category: s!.category,
    status: s!.status, frameworks: s!.frameworks, hardware: s!.hardware, sensors: s!.sensors, ros_compatible: s!.ros_compatible,
    jetson_compatible: s!.jetson_compatible, isaac_sim_compatible: s!.isaac_sim_compatible, downloads: s!.downloads,
    created_at: s!.created_at, published_at: s!.published_at, title: s!.title, tags: s!.tags.join(' '), description: s!.description,
    revision, state: s,
  }));
  await tx.query(
    `INSERT INTO catalog_listings (id, mode, account_id, kind, slug, type, category, status, frameworks, hardware, sensors,
       ros_compatible, jetson_compatible, isaac_sim_compatible, downloads, created_at, published_at, search, revision, state)
     SELECT id, mode, account_id, kind, slug, type, category, status, frameworks, hardware, sensors,
       ros_compatible, jetson_compatible, isaac_sim_compatible, downloads, created_at, published_at,
       setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', tags), 'B') || setweight(to_tsvector('english', description), 'C'),
       revision, state
     FROM jsonb_to_recordset($1::jsonb) AS r(id text, mode text, account_id text, kind text, slug text, type text, category text,
       status text, frameworks jsonb, hardware jsonb, sensors jsonb, ros_compatible boolean, jetson_compatible boolean,
       isaac_sim_compatible boolean, downloads integer, created_at timestamptz, published_at timestamptz, title text, tags text,
       description text, revision integer, state jsonb)
     ON CONFLICT (id) DO UPDATE SET
       type = EXCLUDED.type, category = EXCLUDED.category, status = EXCLUDED.status, frameworks = EXCLUDED.frameworks,
       hardware = EXCLUDED.hardware, sensors = EXCLUDED.sensors, ros_compatible = EXCLUDED.ros_compatible,
       jetson_compatible = EXCLUDED.jetson_compatible, isaac_sim_compatible = EXCLUDED.isaac_sim_compatible,
       downloads = EXCLUDED.downloads, published_at = EXCLUDED.published_at, search = EXCLUDED.search,
       revision = EXCLUDED.revision, state = EXCLUDED.state`,
    [JSON.stringify(records)],
  );
}

/**
 * catalog_listings: one row per model or dataset listing, both modes. `state` holds the
 * same fold the command handlers use; the other columns exist to filter, sort and search.
 * `search` is weighted title (A), tags (B), description (C) under a GIN index.
 */
export const catalogListingsProjection: Projection = {
  name: 'catalog_listings',
  version: 3, // 2: state.published_files (issue 10); 3: GIN without a pending list, search vector in the row (issue 14)
  tables: ['catalog_listings'],
  schema: `
    CREATE TABLE IF NOT EXISTS catalog_listings (
      id                   text PRIMARY KEY,
      mode                 text NOT NULL,
      account_id           text NOT NULL,
      kind                 text NOT NULL,
      slug                 text NOT NULL,
      type                 text NOT NULL,
      category             text NOT NULL,
      status               text NOT NULL,
      frameworks           jsonb NOT NULL,
      hardware             jsonb NOT NULL,
      sensors              jsonb NOT NULL,
      ros_compatible       boolean NOT NULL,
      jetson_compatible    boolean NOT NULL,
      isaac_sim_compatible boolean NOT NULL,
      downloads            integer NOT NULL,
      created_at           timestamptz NOT NULL,
      published_at         timestamptz,
      search               tsvector NOT NULL,
      revision             integer NOT NULL,
      state                jsonb NOT NULL,
      UNIQUE (mode, slug)
    );
    -- Keep the search vector in the row (the wide state goes to TOAST first): a search walks
    -- the newest rows checking the match, and a vector out of line costs a TOAST lookup each.
    ALTER TABLE catalog_listings ALTER COLUMN search SET STORAGE MAIN;
    CREATE INDEX IF NOT EXISTS catalog_listings_public ON catalog_listings (mode, kind, status, published_at DESC, id DESC);
    CREATE INDEX IF NOT EXISTS catalog_listings_own ON catalog_listings (mode, account_id, created_at DESC, id DESC);
    -- fastupdate off: new rows go straight into the index. With the default pending list, a
    -- search scans the unsorted list until a vacuum merges it, and the planner, costing that,
    -- walks the btree instead: a rare word then read every listing.
    CREATE INDEX IF NOT EXISTS catalog_listings_search ON catalog_listings USING GIN (search) WITH (fastupdate = off);`,
  handles: LISTING_EVENT_TYPES,
  whenFailing: 'park',
  apply: (tx, event) => applyListingEvents(tx, [event]),
  applyBatch: applyListingEvents,
};
