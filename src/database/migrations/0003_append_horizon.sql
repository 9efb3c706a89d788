-- The read horizon is bounded by in-flight appends only (issue 9).
--
-- 0001 read below pg_snapshot_xmin, the oldest transaction running anywhere on the server:
-- an idle transaction in another database, a pg_dump or a long report held every reader
-- back. Now each append announces itself with a shared advisory lock taken BEFORE its
-- transaction has an id, and readers stop below the oldest transaction that holds that
-- lock. Why that never skips an event:
--   * a transaction holding the lock with an id is found in pg_locks and bounds the horizon;
--   * one holding it without an id yet, or taking it later, gets an id of at least the
--     snapshot's xmax, which also bounds the horizon;
--   * every other id below the horizon belongs to a transaction that appends nothing;
--   * readers compute the horizon in one statement and read the events in a later one, so
--     an appender that finished between the two is visible to the read.
-- Pinned by test/event-store/postgres-event-store.int.spec.ts ("Usain Bolt" and the
-- outside-transaction cases).

CREATE OR REPLACE FUNCTION announce_append() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  -- 1163284052 is 'EVNT'. A transaction that already has an id may append again only if it
  -- announced itself before getting that id; otherwise a reader could already have passed it.
  IF pg_current_xact_id_if_assigned() IS NOT NULL AND NOT EXISTS (
       SELECT 1 FROM pg_locks
        WHERE pid = pg_backend_pid() AND locktype = 'advisory'
          AND classid = 1163284052 AND objid = 1 AND objsubid = 2) THEN
    RAISE EXCEPTION 'an append must come before any other write in its transaction';
  END IF;
  PERFORM pg_advisory_xact_lock_shared(1163284052, 1);
END;
$$;

CREATE OR REPLACE FUNCTION events_horizon() RETURNS TABLE (horizon xid8, appending boolean)
LANGUAGE sql VOLATILE AS $$
  WITH snap AS (SELECT pg_current_snapshot() AS s),
  appenders AS (
    SELECT t.transactionid::text::bigint AS xid32
      FROM pg_locks a
      JOIN pg_locks t ON t.pid = a.pid AND t.locktype = 'transactionid' AND t.mode = 'ExclusiveLock' AND t.granted
     WHERE a.locktype = 'advisory' AND a.classid = 1163284052 AND a.objid = 1 AND a.objsubid = 2
       AND a.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  ),
  held AS (
    SELECT min(x) AS x FROM snap, pg_snapshot_xip(snap.s) AS x
     WHERE (x::text::bigint % 4294967296) IN (SELECT xid32 FROM appenders)
  )
  SELECT least(pg_snapshot_xmax(snap.s), held.x), held.x IS NOT NULL FROM snap, held
$$;

CREATE OR REPLACE FUNCTION append_to_stream(p_stream_id text, p_expected text, p_events jsonb)
RETURNS TABLE (next_revision bigint, commit_id text, last_position bigint)
LANGUAGE plpgsql AS $$
DECLARE
  n        bigint := jsonb_array_length(p_events);
  new_rev  bigint;
  ev       jsonb;
  ord      bigint := 0;
  pos      bigint;
BEGIN
  IF n = 0 THEN
    RAISE EXCEPTION 'append_to_stream needs at least one event';
  END IF;
  PERFORM announce_append();
  IF p_expected = 'any' THEN
    INSERT INTO streams AS s (stream_id, revision) VALUES (p_stream_id, n - 1)
    ON CONFLICT (stream_id) DO UPDATE SET revision = s.revision + n
    RETURNING s.revision INTO new_rev;
  ELSIF p_expected = 'no_stream' THEN
    INSERT INTO streams (stream_id, revision) VALUES (p_stream_id, n - 1)
    ON CONFLICT (stream_id) DO NOTHING
    RETURNING revision INTO new_rev;
  ELSIF p_expected = 'stream_exists' THEN
    UPDATE streams SET revision = revision + n WHERE stream_id = p_stream_id
    RETURNING revision INTO new_rev;
  ELSE
    UPDATE streams SET revision = revision + n
    WHERE stream_id = p_stream_id AND revision = p_expected::bigint
    RETURNING revision INTO new_rev;
  END IF;

  IF new_rev IS NULL THEN
    RAISE EXCEPTION 'wrong expected revision % for stream %', p_expected, p_stream_id
      USING ERRCODE = 'EV409';
  END IF;

  -- One row at a time so global positions follow stream revisions.
  FOR ev IN SELECT value FROM jsonb_array_elements(p_events) LOOP
    INSERT INTO events (event_id, stream_id, stream_revision, type, data, metadata)
    VALUES ((ev->>'id')::uuid, p_stream_id, new_rev - n + 1 + ord, ev->>'type', ev->'data',
            COALESCE(ev->'metadata', '{}'::jsonb))
    RETURNING global_position INTO pos;
    ord := ord + 1;
  END LOOP;

  PERFORM pg_notify('events_appended', '');
  RETURN QUERY SELECT new_rev, pg_current_xact_id()::text, pos;
END;
$$;
