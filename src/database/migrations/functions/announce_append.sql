-- The read horizon is bounded by in-flight appends only (issue 9).
--
-- Before, readers read below pg_snapshot_xmin, the oldest transaction running anywhere on the server:
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
