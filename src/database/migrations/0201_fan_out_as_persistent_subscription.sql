-- The webhook fan-out is now the persistent subscription group webhook_fan_out (issue 13),
-- no longer a checkpointed subscriber. Its old checkpoint, lease and parked events go: the
-- new group starts at the beginning of the log and handles every public event again,
-- events the old one parked included, creating only the deliveries that do not exist yet.
DELETE FROM projection_checkpoints WHERE name = 'subscriber:webhook_fan_out';
DELETE FROM consumer_leases WHERE name = 'subscriber:webhook_fan_out';
DELETE FROM parked_events WHERE consumer = 'subscriber:webhook_fan_out';
