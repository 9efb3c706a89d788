import type { OperatorRole } from '../platform/auth/operator';

/** Facts of the operators context (issue 38: who did what). */
export const OperatorEvents = {
  OperatorCreated: 'OperatorCreated',
  OperatorRevoked: 'OperatorRevoked',
} as const;

/** A person was given a token for the operator API and the console. */
export interface OperatorCreated {
  name: string;
  role: OperatorRole;
  /** SHA-256 (hex) of the token; the token itself is shown once and never stored. */
  token_hash: string;
  created_at: string;
}

/** The operator's token stops working; the name may be given a new token later (OperatorCreated again). */
export interface OperatorRevoked {
  name: string;
  revoked_at: string;
}
