-- The Postgres event store. Positions are the pair (transaction_id, global_position):
-- readers only read below the oldest running transaction id, so an event that commits
-- late always sorts after any checkpoint already taken (architecture rule 4).
CREATE TABLE IF NOT EXISTS streams (
  stream_id text PRIMARY KEY,
  revision  bigint NOT NULL
);

CREATE SEQUENCE IF NOT EXISTS events_global_position_seq;

CREATE TABLE IF NOT EXISTS events (
  global_position bigint      NOT NULL DEFAULT nextval('events_global_position_seq'),
  transaction_id  xid8        NOT NULL DEFAULT pg_current_xact_id(),
  event_id        uuid        NOT NULL UNIQUE,
  stream_id       text        NOT NULL,
  stream_revision bigint      NOT NULL,
  type            text        NOT NULL,
  data            jsonb       NOT NULL,
  metadata        jsonb       NOT NULL DEFAULT '{}'::jsonb,
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (stream_id, stream_revision)
);

CREATE INDEX IF NOT EXISTS events_by_commit_order ON events (transaction_id, global_position);

-- The functions (append_to_stream, announce_append, events_horizon) are defined once each,
-- in functions/, and applied whenever their text changes (src/database/migrate.ts).
