-- Consumers of the event log (projection builds and subscribers): who runs each, what it
-- failed on, what it parked, and which build of each read model serves queries (issue 9).

-- A consumer that keeps failing on one event says so here, for `svc projections status`.
ALTER TABLE projection_checkpoints
  ADD COLUMN IF NOT EXISTS error          text,
  ADD COLUMN IF NOT EXISTS error_event_id uuid,
  ADD COLUMN IF NOT EXISTS error_count    integer NOT NULL DEFAULT 0,
  -- Set while a consumer that must never skip (money) is stopped on an event.
  ADD COLUMN IF NOT EXISTS stalled_since  timestamptz;

-- One leader per consumer: the instance whose lease has not expired runs it.
CREATE TABLE IF NOT EXISTS consumer_leases (
  name       text        PRIMARY KEY,
  owner      text        NOT NULL,
  expires_at timestamptz NOT NULL
);

-- Every build of a read model. A build is one version of a projection built from the start
-- of the log into its own schema, under its own checkpoint (its id). Queries read the view
-- public.<table>, which points at the live build; a new build catches up beside it and
-- takes over in one short transaction.
CREATE TABLE IF NOT EXISTS projection_builds (
  id          text        PRIMARY KEY,
  projection  text        NOT NULL,
  version     integer     NOT NULL,
  schema_name text        NOT NULL UNIQUE,
  state       text        NOT NULL CHECK (state IN ('building', 'live', 'retired')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  live_at     timestamptz,
  retired_at  timestamptz
);
CREATE UNIQUE INDEX IF NOT EXISTS projection_builds_one_live ON projection_builds (projection) WHERE state = 'live';

-- Events a consumer gave up on after its attempts, with the error; the consumer went on.
CREATE TABLE IF NOT EXISTS parked_events (
  consumer  text        NOT NULL,
  event_id  uuid        NOT NULL,
  position  text        NOT NULL,
  type      text        NOT NULL,
  -- The event as the consumer received it, so a retry needs nothing else.
  event     jsonb       NOT NULL,
  error     text        NOT NULL,
  attempts  integer     NOT NULL,
  parked_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (consumer, event_id)
);

-- Numbers the schemas of rebuilds of the same version.
CREATE SEQUENCE IF NOT EXISTS projection_build_seq;
