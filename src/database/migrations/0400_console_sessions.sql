-- Console sign-ins (docs/console.md). Not a read model: a session is who is looking, not a
-- fact of the business, and nothing rebuilds it. The cookie carries a random token; only its
-- SHA-256 is stored, so a copy of this table opens no session.
CREATE TABLE IF NOT EXISTS console_sessions (
  token_hash  text        PRIMARY KEY,
  role        text        NOT NULL CHECK (role IN ('operator', 'creator')),
  -- A creator's session stands on the key it was exchanged for: revoked or expired, the session ends.
  key_id      text,
  mode        text        NOT NULL CHECK (mode IN ('test', 'live')),
  -- The synchronizer token every state-changing form carries.
  csrf_token  text        NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS console_sessions_expiry ON console_sessions (expires_at);
