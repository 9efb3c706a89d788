-- The console's overview charts the last hour's delivery attempts by outcome: found by when
-- they finished, not by scanning every attempt ever made.
CREATE INDEX IF NOT EXISTS webhook_delivery_attempts_by_finish ON webhook_delivery_attempts (finished_at) WHERE finished_at IS NOT NULL;
