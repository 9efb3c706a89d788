import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, Database } from '../database/database';
import type { OperatorRole } from '../platform/auth/operator';

/** The name of the operators read model (its projection in projections/, its checkpoint). */
export const OPERATORS_READ_MODEL = 'operators';

export interface OperatorView {
  name: string;
  role: OperatorRole;
  created_at: string;
  revoked_at: string | null;
}

const iso = (value: Date | string | null): string | null => (value === null ? null : new Date(value).toISOString());
const toView = (row: any): OperatorView => ({ name: row.name, role: row.role, created_at: iso(row.created_at)!, revoked_at: iso(row.revoked_at) });

/** Reads of the operators read model; token hashes never leave it. */
@Injectable()
export class OperatorQueries {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async list(): Promise<OperatorView[]> {
    const { rows } = await this.db.query('SELECT name, role, created_at, revoked_at FROM operators ORDER BY name');
    return rows.map(toView);
  }

  async byName(name: string): Promise<OperatorView | undefined> {
    const { rows } = await this.db.query('SELECT name, role, created_at, revoked_at FROM operators WHERE name = $1', [name]);
    return rows[0] && toView(rows[0]);
  }

  async byTokenHash(tokenHash: string): Promise<OperatorView | undefined> {
    const { rows } = await this.db.query('SELECT name, role, created_at, revoked_at FROM operators WHERE token_hash = $1', [tokenHash]);
    return rows[0] && toView(rows[0]);
  }
}
