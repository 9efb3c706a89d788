import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, Database } from '../database/database';
import type { AuthContext } from '../platform/auth/auth-context';
import { invalidCursor, Page, toPage } from '../platform/pagination';
import type { PublicJob } from './job.decider';

/** The name of this context's read model (its projection in projections/, its checkpoint). */
export const FACTORY_JOBS_READ_MODEL = 'factory_jobs';

type Owner = Pick<AuthContext, 'accountId' | 'mode'>;

/** Reads of factory_jobs, always scoped to the caller's account and mode. */
@Injectable()
export class JobQueries {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async find(owner: Owner, id: string): Promise<PublicJob | undefined> {
    const { rows } = await this.db.query<{ job: PublicJob }>('SELECT job FROM factory_jobs WHERE id = $1 AND account_id = $2 AND mode = $3', [id, owner.accountId, owner.mode]);
    return rows[0]?.job;
  }

  /** Newest first; the cursor is the last job of the previous page. */
  async list(owner: Owner, limit: number, cursor?: string): Promise<Page<PublicJob>> {
    if (cursor && !(await this.find(owner, cursor))) throw invalidCursor();
    const { rows } = await this.db.query<{ id: string; job: PublicJob }>(
      `SELECT id, job FROM factory_jobs
        WHERE account_id = $1 AND mode = $2
          AND ($3::text IS NULL OR (created_at, id) < (SELECT created_at, id FROM factory_jobs WHERE id = $3))
        ORDER BY created_at DESC, id DESC LIMIT $4`,
      [owner.accountId, owner.mode, cursor ?? null, limit + 1],
    );
    return toPage(rows, limit, (row) => row.job);
  }
}
