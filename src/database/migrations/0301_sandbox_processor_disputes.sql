-- The sandbox processor's disputes: a 'dispute' withdraws the disputed amount and its fee
-- (fee_cents, part of amount_cents), once per payment; closing it records either a
-- 'dispute_reversal' (won: the amount, not the fee, comes back) or a 'dispute_lost' (nothing
-- moves), once per dispute, whichever is asked first.
ALTER TABLE sandbox_processor_records DROP CONSTRAINT IF EXISTS sandbox_processor_records_kind_check;
ALTER TABLE sandbox_processor_records ADD CONSTRAINT sandbox_processor_records_kind_check
  CHECK (kind IN ('charge', 'fee', 'refund', 'transfer', 'dispute', 'dispute_reversal', 'dispute_lost'));
ALTER TABLE sandbox_processor_records ADD COLUMN IF NOT EXISTS fee_cents bigint;
