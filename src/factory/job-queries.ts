import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, Database } from '../database/database';
import { Owner, ownedBy } from '../platform/owner-scope';
import { invalidCursor, Page, toPage } from '../platform/pagination';
import type { PublicJob } from './job.decider';

/** The name of this context's read model (its projection in projections/, its checkpoint). */
export const FACTORY_JOBS_READ_MODEL = 'factory_jobs';

/** Reads of factory_jobs, always scoped to the caller's account and mode. */
@Injectable()
export class JobQueries {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async find(owner: Owner, id: string): Promise<PublicJob | undefined> {
    const s = ownedBy(owner);
    const { rows } = await this.db.query<{ job: PublicJob }>(`SELECT job FROM factory_jobs WHERE ${s.where()} AND id = ${s.param(id)}`, s.params);
    return rows[0]?.job;
  }

  /** Newest first; the cursor is the last job of the previous page. */
  async list(owner: Owner, limit: number, cursor?: string): Promise<Page<PublicJob>> {
    if (cursor && !(await this.find(owner, cursor))) throw invalidCursor();
    const s = ownedBy(owner);
    const after = s.param(cursor ?? null);
    const { rows } = await this.db.query<{ id: string; job: PublicJob }>(
      `SELECT id, job FROM factory_jobs
        WHERE ${s.where()}
          AND (${after}::text IS NULL OR (created_at, id) < (SELECT created_at, id FROM factory_jobs WHERE id = ${after}))
        ORDER BY created_at DESC, id DESC LIMIT ${s.param(limit + 1)}`,
      s.params,
    );
    return toPage(rows, limit, (row) => row.job);
  }
}
