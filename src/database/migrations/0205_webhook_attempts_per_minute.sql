-- The console's overview charts the last hour's delivery attempts per minute by outcome. A
-- burst (100,000 attempts in the hour) made counting them on every load cost 185 ms, so the
-- delivery worker keeps the counts as it records each batch of outcomes, in the same
-- statement (src/webhooks/delivery-worker.ts, writeOutcomes). Operational, like the
-- attempts it counts: not a read model, never rebuilt.
--   succeeded: answered 2xx; failed: any other answer, or none (refused, timed out).
-- An attempt counts in the minute it finished (finished_at); interrupted attempts (never
-- finished) are not counted, as the chart never counted them.
CREATE TABLE IF NOT EXISTS webhook_attempts_per_minute (
  mode      text        NOT NULL,
  minute    timestamptz NOT NULL,
  succeeded bigint      NOT NULL,
  failed    bigint      NOT NULL,
  PRIMARY KEY (mode, minute)
);

-- The attempts recorded before this migration. Instances still running older code during a
-- rolling deploy record attempts without counting them until they are replaced: those
-- minutes show fewer attempts than were made.
INSERT INTO webhook_attempts_per_minute (mode, minute, succeeded, failed)
SELECT d.mode, date_trunc('minute', a.finished_at),
       count(*) FILTER (WHERE a.response_status BETWEEN 200 AND 299),
       count(*) FILTER (WHERE a.response_status IS NULL OR a.response_status NOT BETWEEN 200 AND 299)
  FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
 WHERE a.finished_at IS NOT NULL
 GROUP BY 1, 2
ON CONFLICT (mode, minute) DO NOTHING;
