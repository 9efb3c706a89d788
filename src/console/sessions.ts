import { Inject, Injectable } from '@nestjs/common';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { DATABASE, Database } from '../database/database';
import type { Mode } from '../platform/mode';

export type ConsoleRole = 'operator' | 'creator';

export interface ConsoleSession {
  role: ConsoleRole;
  /** A creator's: the key the session was exchanged for (checked on every request). */
  keyId: string | null;
  /** An operator's: who signed in (null: a session from before operators had names, the bootstrap `admin`). */
  operator: string | null;
  mode: Mode;
  csrfToken: string;
  expiresAt: Date;
  /** When it was opened: a token issued later to the same operator name does not carry it. */
  openedAt: Date;
}

/** How long a sign-in lasts, whatever is done meanwhile: a working day. */
export const SESSION_HOURS = 8;

const hash = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * Console sessions in Postgres (console_sessions), so every instance knows them and a
 * restart signs nobody out. The browser holds only the random token; the API key it was
 * exchanged for is never stored, here or there.
 */
@Injectable()
export class ConsoleSessions {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /** Opens a session; answers the cookie's token. */
  async open(role: ConsoleRole, mode: Mode, keyId: string | null, operator: string | null = null): Promise<{ token: string; session: ConsoleSession }> {
    const token = randomBytes(32).toString('base64url');
    const openedAt = new Date();
    const session: ConsoleSession = {
      role,
      keyId,
      operator,
      mode,
      csrfToken: randomBytes(24).toString('base64url'),
      expiresAt: new Date(openedAt.getTime() + SESSION_HOURS * 3600_000),
      openedAt,
    };
    // Sessions that ended are swept as new ones open: no timer, and the table stays small.
    await this.db.query('DELETE FROM console_sessions WHERE expires_at < now()');
    await this.db.query(
      'INSERT INTO console_sessions (token_hash, role, key_id, operator_name, mode, csrf_token, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
      [hash(token), role, keyId, operator, mode, session.csrfToken, openedAt.toISOString(), session.expiresAt.toISOString()],
    );
    return { token, session };
  }

  async find(token: string | undefined): Promise<ConsoleSession | undefined> {
    if (!token) return undefined;
    const { rows } = await this.db.query<{
      role: ConsoleRole;
      key_id: string | null;
      operator_name: string | null;
      mode: Mode;
      csrf_token: string;
      created_at: Date | string;
      expires_at: Date | string;
    }>('SELECT role, key_id, operator_name, mode, csrf_token, created_at, expires_at FROM console_sessions WHERE token_hash = $1 AND expires_at > now()', [hash(token)]);
    const row = rows[0];
    return (
      row && {
        role: row.role,
        keyId: row.key_id,
        operator: row.operator_name,
        mode: row.mode,
        csrfToken: row.csrf_token,
        expiresAt: new Date(row.expires_at),
        openedAt: new Date(row.created_at),
      }
    );
  }

  /** An operator's mode switch. */
  async setMode(token: string, mode: Mode): Promise<void> {
    await this.db.query("UPDATE console_sessions SET mode = $2 WHERE token_hash = $1 AND role = 'operator'", [hash(token), mode]);
  }

  async close(token: string | undefined): Promise<void> {
    if (token) await this.db.query('DELETE FROM console_sessions WHERE token_hash = $1', [hash(token)]);
  }
}

/** Constant-time comparison of a submitted CSRF token with the session's. */
export function csrfMatches(session: ConsoleSession, submitted: unknown): boolean {
  if (typeof submitted !== 'string' || !submitted) return false;
  const a = createHash('sha256').update(submitted).digest();
  const b = createHash('sha256').update(session.csrfToken).digest();
  return timingSafeEqual(a, b);
}
