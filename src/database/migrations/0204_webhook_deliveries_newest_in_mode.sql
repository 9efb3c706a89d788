-- The console's webhooks page lists one mode's deliveries of every status newest first: the
-- index by mode and status cannot give that order, so each view sorted every delivery of the
-- mode (a seq scan and a top-N sort, 130 ms at 100,000 deliveries). This one reads the newest
-- 26 and stops.
CREATE INDEX IF NOT EXISTS webhook_deliveries_newest_in_mode ON webhook_deliveries (mode, created_at DESC, id DESC);
