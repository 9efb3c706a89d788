import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, Database } from '../database/database';
import type { Mode } from '../platform/mode';
import { Owner, ownedBy } from '../platform/owner-scope';
import type { Tier } from './events';

/** The name of the read model of open key activations (its projection in projections/, its checkpoint). */
export const KEY_ACTIVATIONS_READ_MODEL = 'key_activations';

export interface AccountView {
  id: string;
  slug: string;
  name: string;
  email: string;
  created_at: string;
}

export interface ApiKeyView {
  id: string;
  account_id: string;
  name: string;
  mode: Mode;
  tier: Tier;
  scopes: string[];
  active: boolean;
  expires_at: string | null;
  revoked_at: string | null;
  created_at: string;
}

export interface ApiKeyRecord extends ApiKeyView {
  secret_hash: string;
}

const iso = (value: Date | string | null): string | null => (value === null ? null : new Date(value).toISOString());

function toAccount(row: any): AccountView {
  return { id: row.id, slug: row.slug, name: row.name, email: row.email, created_at: iso(row.created_at)! };
}

function toKey(row: any): ApiKeyRecord {
  return {
    id: row.id,
    account_id: row.account_id,
    name: row.name,
    mode: row.mode,
    tier: row.tier,
    scopes: row.scopes,
    active: row.active,
    expires_at: iso(row.expires_at),
    revoked_at: iso(row.revoked_at),
    created_at: iso(row.created_at)!,
    secret_hash: row.secret_hash,
  };
}

/** Reads of the accounts, api_keys and credit_balances read models. */
@Injectable()
export class AccountQueries {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async findAccount(idOrSlug: string): Promise<AccountView | undefined> {
    const { rows } = await this.db.query('SELECT * FROM accounts WHERE id = $1 OR slug = $1 LIMIT 1', [idOrSlug]);
    return rows[0] && toAccount(rows[0]);
  }

  /** Generation credits left in one mode (credit_balances); 0 before any grant. */
  async creditsLeft(owner: Owner): Promise<number> {
    const s = ownedBy(owner);
    const { rows } = await this.db.query<{ credits: number }>(`SELECT credits FROM credit_balances WHERE ${s.where()}`, s.params);
    return rows[0]?.credits ?? 0;
  }

  /** Keys whose public lookup id matches: usually one, a few when prefixes collide. */
  async keysByLookupId(lookupId: string): Promise<ApiKeyRecord[]> {
    const { rows } = await this.db.query('SELECT * FROM api_keys WHERE lookup_id = $1', [lookupId]);
    return rows.map(toKey);
  }

  async findKey(keyId: string): Promise<ApiKeyRecord | undefined> {
    const { rows } = await this.db.query('SELECT * FROM api_keys WHERE id = $1', [keyId]);
    return rows[0] && toKey(rows[0]);
  }

  /** An account's keys; an inactive live premium key with its activation checkout while that is still open. */
  async listKeys(accountId: string, now = new Date()): Promise<(ApiKeyView & { activation_checkout_url: string | null })[]> {
    const { rows } = await this.db.query(
      `SELECT k.*, CASE WHEN NOT k.active AND k.revoked_at IS NULL AND a.expires_at > $2 THEN a.checkout_url END AS activation_checkout_url
         FROM api_keys k LEFT JOIN key_activations a ON a.key_id = k.id
        WHERE k.account_id = $1 ORDER BY k.created_at, k.id`,
      [accountId, now.toISOString()],
    );
    return rows.map((row) => {
      const { secret_hash: _hidden, ...view } = toKey(row);
      return { ...view, activation_checkout_url: row.activation_checkout_url ?? null };
    });
  }

}
