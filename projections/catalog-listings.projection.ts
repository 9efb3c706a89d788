import { evolve, ListingState } from '../src/catalog/listing';
import { LISTING_EVENT_TYPES } from '../src/catalog/events';
import type { Projection } from '../src/projection-runner/projection';

/**
 * catalog_listings: one row per model or dataset listing, both modes. `state` holds the
 * same fold the command handlers use; the other columns exist to filter, sort and search.
 * `search` is weighted title (A), tags (B), description (C) under a GIN index.
 */
export const catalogListingsProjection: Projection = {
  name: 'catalog_listings',
  version: 2, // 2: state.published_files (issue 10)
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
    CREATE INDEX IF NOT EXISTS catalog_listings_public ON catalog_listings (mode, kind, status, published_at DESC, id DESC);
    CREATE INDEX IF NOT EXISTS catalog_listings_own ON catalog_listings (mode, account_id, created_at DESC, id DESC);
    CREATE INDEX IF NOT EXISTS catalog_listings_search ON catalog_listings USING GIN (search);`,
  handles: LISTING_EVENT_TYPES,
  whenFailing: 'park',
  async apply(tx, event) {
    const listingId = (event.data as { listing_id: string }).listing_id;
    const { rows } = await tx.query<{ state: ListingState; revision: number }>(
      'SELECT state, revision FROM catalog_listings WHERE id = $1',
      [listingId],
    );
    if (rows.length && rows[0].revision >= event.revision) return;
    const s = evolve(rows[0]?.state, event);
    if (!s) return;
    await tx.query(
      `INSERT INTO catalog_listings (id, mode, account_id, kind, slug, type, category, status, frameworks, hardware, sensors,
         ros_compatible, jetson_compatible, isaac_sim_compatible, downloads, created_at, published_at, search, revision, state)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10::jsonb, $11::jsonb, $12, $13, $14, $15, $16, $17,
         setweight(to_tsvector('english', $18), 'A') || setweight(to_tsvector('english', $19), 'B') || setweight(to_tsvector('english', $20), 'C'),
         $21, $22::jsonb)
       ON CONFLICT (id) DO UPDATE SET
         type = EXCLUDED.type, category = EXCLUDED.category, status = EXCLUDED.status, frameworks = EXCLUDED.frameworks,
         hardware = EXCLUDED.hardware, sensors = EXCLUDED.sensors, ros_compatible = EXCLUDED.ros_compatible,
         jetson_compatible = EXCLUDED.jetson_compatible, isaac_sim_compatible = EXCLUDED.isaac_sim_compatible,
         downloads = EXCLUDED.downloads, published_at = EXCLUDED.published_at, search = EXCLUDED.search,
         revision = EXCLUDED.revision, state = EXCLUDED.state`,
      [
        s.id, s.mode, s.account_id, s.kind, s.slug, s.type, s.category, s.status,
        JSON.stringify(s.frameworks), JSON.stringify(s.hardware), JSON.stringify(s.sensors),
        s.ros_compatible, s.jetson_compatible, s.isaac_sim_compatible, s.downloads, s.created_at, s.published_at,
        s.title, s.tags.join(' '), s.description, event.revision, JSON.stringify(s),
      ],
    );
  },
};
