-- The oldest transaction id a reader of the log must stay below (see announce_append.sql).
--
-- The horizon takes its snapshot before it reads pg_locks, by construction (issue 9 review).
--
-- It once computed both in one SQL statement, where the planner decides which is read first.
-- Read pg_locks first, and an append that announces itself and gets its transaction id in
-- between is in neither: not among the announced appenders (too late), yet below the
-- snapshot's xmax (too early), so a reader could pass its events before they commit. With
-- the snapshot first, an appender with an id at snapshot time already holds its announcement
-- lock when pg_locks is read, and one that gets its id later gets one of at least xmax.

CREATE OR REPLACE FUNCTION events_horizon() RETURNS TABLE (horizon xid8, appending boolean)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  snap pg_snapshot := pg_current_snapshot();
  held xid8;
BEGIN
  SELECT min(x) INTO held
    FROM pg_snapshot_xip(snap) AS x
   WHERE (x::text::bigint % 4294967296) IN (
     SELECT t.transactionid::text::bigint
       FROM pg_locks a
       JOIN pg_locks t ON t.pid = a.pid AND t.locktype = 'transactionid' AND t.mode = 'ExclusiveLock' AND t.granted
      WHERE a.locktype = 'advisory' AND a.classid = 1163284052 AND a.objid = 1 AND a.objsubid = 2
        AND a.database = (SELECT oid FROM pg_database WHERE datname = current_database()));
  RETURN QUERY SELECT least(pg_snapshot_xmax(snap), held), held IS NOT NULL;
END;
$$;
