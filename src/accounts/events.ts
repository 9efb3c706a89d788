import type { Mode } from '../platform/mode';

export type Tier = 'free' | 'premium';

/** Facts of the accounts context, one type per past-tense event name. */
export interface AccountSlugClaimed {
  slug: string;
  account_id: string;
}

export interface AccountCreated {
  account_id: string;
  slug: string;
  name: string;
  email: string;
  created_at: string;
}

export interface ApiKeyCreated {
  key_id: string;
  account_id: string;
  mode: Mode;
  tier: Tier;
  name: string;
  scopes: string[];
  /** First 12 characters of the key, the public lookup id. */
  lookup_id: string;
  /** SHA-256 (hex) of the rest of the key; the key itself is never stored. */
  secret_hash: string;
  active: boolean;
  expires_at: string | null;
  created_at: string;
}

export interface ApiKeyRevoked {
  key_id: string;
  account_id: string;
  mode: Mode;
  revoked_at: string;
}

/** A live premium key's activation fee was paid (decisions section 3); it now serves inference. */
export interface ApiKeyActivated {
  key_id: string;
  account_id: string;
  mode: Mode;
  /** The checkout session that paid for it. */
  checkout_session_id: string;
  activated_at: string;
}

/**
 * An activation checkout was opened for an inactive live premium key (at its creation, or
 * again with svc keys activation once the last one lapsed): where its owner pays, until when.
 */
export interface ApiKeyActivationOpened {
  key_id: string;
  account_id: string;
  mode: Mode;
  checkout_session_id: string;
  checkout_url: string;
  expires_at: string;
  opened_at: string;
}

export interface CreditsGranted {
  account_id: string;
  mode: Mode;
  amount: number;
  /** The balance after this grant. */
  credits: number;
  granted_at: string;
}

export const AccountEvents = {
  AccountSlugClaimed: 'AccountSlugClaimed',
  AccountCreated: 'AccountCreated',
  ApiKeyCreated: 'ApiKeyCreated',
  ApiKeyRevoked: 'ApiKeyRevoked',
  ApiKeyActivated: 'ApiKeyActivated',
  ApiKeyActivationOpened: 'ApiKeyActivationOpened',
  CreditsGranted: 'CreditsGranted',
} as const;
