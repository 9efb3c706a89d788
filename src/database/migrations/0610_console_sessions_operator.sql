-- Named operators (issue 38): an operator's console session names who signed in, so what
-- they do is recorded as theirs and a revoked token ends the session. NULL: a session opened
-- before this column, with the bootstrap ADMIN_TOKEN (operator "admin").
ALTER TABLE console_sessions ADD COLUMN IF NOT EXISTS operator_name text;
