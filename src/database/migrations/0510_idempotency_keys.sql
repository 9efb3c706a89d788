-- Idempotency keys (issue 39): the answer a POST sent with an Idempotency-Key got, so that a
-- retry under the same key gets that answer again and changes nothing. Request bookkeeping,
-- not a fact of the business: no event records it, nothing rebuilds it, rows older than a
-- day are swept (docs/decisions.md, "Idempotency keys in a table of the read-model database").
CREATE TABLE IF NOT EXISTS idempotency_keys (
  -- Whose key: "<account>:<mode>" for an API key's, "operator" for the admin token's.
  scope        text        NOT NULL,
  key          text        NOT NULL,
  -- The request the key was first used for; another under the same key is refused.
  path         text        NOT NULL,
  body_sha256  text        NOT NULL,
  -- While the first request runs: its token, and until when its instance answers for it
  -- (renewed while it runs; a crashed instance's key is free again once this has passed).
  owner        text,
  locked_until timestamptz,
  -- The answer once there is one (5xx answers are not kept): status, content type, and the
  -- body sealed with AES-256-GCM, since some answers carry a secret shown once.
  status       integer,
  content_type text,
  body         text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (scope, key)
);
CREATE INDEX IF NOT EXISTS idempotency_keys_by_age ON idempotency_keys (created_at);
