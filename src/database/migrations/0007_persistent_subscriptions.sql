-- Persistent subscriptions (competing consumers) on the Postgres event store (issue 13).
-- A group reads the log forward, once, into its queue of events not yet acknowledged;
-- consumers lease events from the queue with FOR UPDATE SKIP LOCKED and delete them on
-- acknowledgement. EventStoreDB keeps the same state inside the server.
CREATE TABLE IF NOT EXISTS persistent_subscription_groups (
  group_name text        PRIMARY KEY,
  types      text[]      NOT NULL,
  -- Every event of the group's types up to here is queued or was acknowledged.
  read_to    text        NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS persistent_subscription_events (
  group_name   text        NOT NULL REFERENCES persistent_subscription_groups ON DELETE CASCADE,
  position     text        NOT NULL,
  event_id     uuid        NOT NULL,
  -- Times handed out so far: the retry count of the next delivery.
  deliveries   integer     NOT NULL DEFAULT 0,
  -- Set while a consumer holds the event; once past, that consumer is taken for dead.
  leased_until timestamptz,
  parked_at    timestamptz,
  park_reason  text,
  PRIMARY KEY (group_name, position)
);

CREATE INDEX IF NOT EXISTS persistent_subscription_events_parked
  ON persistent_subscription_events (group_name, parked_at) WHERE parked_at IS NOT NULL;
