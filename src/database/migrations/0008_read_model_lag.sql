-- Read-model lag over time, for the console's overview chart (issue 26): per minute and read
-- model, the largest lag (seconds, the age of the oldest event it had not read) any instance
-- running it saw in that minute (src/projection-runner/lag-samples.ts). Kept a day; the
-- sampler deletes older rows as it writes.
CREATE TABLE IF NOT EXISTS read_model_lag (
  minute      timestamptz      NOT NULL,
  read_model  text             NOT NULL,
  lag_seconds double precision NOT NULL,
  PRIMARY KEY (minute, read_model)
);
