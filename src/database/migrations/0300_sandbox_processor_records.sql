-- The sandbox payment processor's own books: what it charged, kept as fees, refunded and
-- transferred, apart from our event log as a real processor's are. `svc ledger reconcile`
-- compares them with the journal. Not a read model: nothing rebuilds them.
CREATE TABLE IF NOT EXISTS sandbox_processor_records (
  id              text        PRIMARY KEY,
  mode            text        NOT NULL,
  kind            text        NOT NULL CHECK (kind IN ('charge', 'fee', 'refund', 'transfer')),
  -- Always positive: which way the money went is the kind's.
  amount_cents    bigint      NOT NULL CHECK (amount_cents >= 0),
  currency        text        NOT NULL,
  -- A charge's checkout session: a session is charged once.
  session_id      text,
  -- A fee's or a refund's charge.
  payment_id      text,
  -- A retried refund or transfer with the same key is the same one.
  idempotency_key text        UNIQUE,
  created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX IF NOT EXISTS sandbox_processor_charge_per_session ON sandbox_processor_records (session_id) WHERE kind = 'charge';
CREATE INDEX IF NOT EXISTS sandbox_processor_records_by_payment ON sandbox_processor_records (payment_id);
CREATE INDEX IF NOT EXISTS sandbox_processor_records_by_time ON sandbox_processor_records (mode, created_at);
