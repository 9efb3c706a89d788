-- The operator's view of deliveries (the console's webhooks page): one mode's deliveries of
-- one status, newest first, and their counts, across accounts, without scanning the others.
CREATE INDEX IF NOT EXISTS webhook_deliveries_by_mode ON webhook_deliveries (mode, status, created_at DESC, id DESC);
