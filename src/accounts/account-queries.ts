import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, Database } from '../database/database';
import type { Mode } from '../platform/mode';
import type { Tier } from './events';

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
  async creditsLeft(accountId: string, mode: Mode): Promise<number> {
    const { rows } = await this.db.query<{ credits: number }>('SELECT credits FROM credit_balances WHERE account_id = $1 AND mode = $2', [accountId, mode]);
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

  async listKeys(accountId: string): Promise<ApiKeyView[]> {
    const { rows } = await this.db.query('SELECT * FROM api_keys WHERE account_id = $1 ORDER BY created_at, id', [accountId]);
    return rows.map((row) => {
      const { secret_hash: _hidden, ...view } = toKey(row);
      return view;
    });
  }

}
