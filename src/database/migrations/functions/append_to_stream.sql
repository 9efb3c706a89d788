-- One round trip per append. The expected revision is checked BEFORE any nextval, so a
-- rejected append leaves no sequence gap (Marten #4765). Expected is 'any', 'no_stream',
-- 'stream_exists' or the revision (0-based) of the stream's last event.
--
-- Appends no longer NOTIFY inside their transaction (issue 14).
--
-- Postgres queues a transaction's notifications at commit under one lock for the whole
-- server, so every appender that notified waited for the others' commits: 7-8 of 8
-- concurrent appenders sat on Lock:object. The appending process now wakes its own readers
-- at once and tells other instances with one debounced NOTIFY after the commit
-- (PostgresEventStore.append); a reader that misses it polls, so no event waits longer
-- than the polling fallback.

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

  RETURN QUERY SELECT new_rev, pg_current_xact_id()::text, pos;
END;
$$;
