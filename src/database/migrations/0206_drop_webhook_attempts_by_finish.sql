-- 0203's index served the overview's count of the last hour's attempts; since 0205 the
-- overview reads webhook_attempts_per_minute and nothing reads attempts by finish time. The
-- index cost a write on every finished attempt (the delivery worker's outcome statement).
DROP INDEX IF EXISTS webhook_delivery_attempts_by_finish;
