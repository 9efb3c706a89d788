import { JOB_EVENT_TYPES } from '../src/factory/events';
import { evolveJob, JobEvent, JobState, toPublicJob } from '../src/factory/job.decider';
import type { Projection } from '../src/projection-runner/projection';
import { FACTORY_JOBS_READ_MODEL } from '../src/factory/job-queries';

/**
 * factory_jobs: the job objects GET /v1/factory/jobs serves. Each row keeps the folded
 * state and the stream revision it reflects, so an event is applied once even if offered
 * again; the same evolve as the commands, so the read model cannot drift from the stream.
 */
export const factoryJobsProjection: Projection = {
  name: FACTORY_JOBS_READ_MODEL,
  version: 1,
  tables: ['factory_jobs'],
  schema: `
    CREATE TABLE IF NOT EXISTS factory_jobs (
      id         text PRIMARY KEY,
      account_id text NOT NULL,
      mode       text NOT NULL,
      stage      text NOT NULL,
      revision   integer NOT NULL,
      state      jsonb NOT NULL,
      job        jsonb NOT NULL,
      created_at timestamptz NOT NULL
    );
    CREATE INDEX IF NOT EXISTS factory_jobs_by_owner ON factory_jobs (account_id, mode, created_at DESC, id DESC);`,
  handles: JOB_EVENT_TYPES,
  whenFailing: 'park',
  async apply(tx, event) {
    const { rows } = await tx.query<{ state: JobState; revision: number }>('SELECT state, revision FROM factory_jobs WHERE id = $1', [event.data.job_id]);
    const row = rows[0];
    if (row && event.revision <= row.revision) return;
    // A job stream holds job events only: their types and data are the union's.
    const state = evolveJob(row?.state, event as JobEvent);
    if (!state) return;
    await tx.query(
      `INSERT INTO factory_jobs (id, account_id, mode, stage, revision, state, job, created_at)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8)
       ON CONFLICT (id) DO UPDATE SET stage = EXCLUDED.stage, revision = EXCLUDED.revision, state = EXCLUDED.state, job = EXCLUDED.job`,
      [state.id, state.account_id, state.mode, state.stage, event.revision, JSON.stringify(state), JSON.stringify(toPublicJob(state)), state.created_at],
    );
  },
};
