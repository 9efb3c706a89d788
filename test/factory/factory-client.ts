import type { TestApp } from '../support/app';
import { eventually } from '../support/eventually';

export const grantCredits = async (t: TestApp, accountId: string, amount: number, mode: 'test' | 'live' = 'test') => {
  const res = await t.admin('POST', '/admin/credits', { account: accountId, mode, amount });
  if (res.status !== 200) throw new Error(`grant failed: ${res.text}`);
  return res.body;
};

export const createJob = (t: TestApp, key: string, prompt: unknown) => t.request('POST', '/v1/factory/jobs', { key, body: { prompt } });

export const getJob = (t: TestApp, key: string, id: string) => t.request('GET', `/v1/factory/jobs/${id}`, { key });

/** Polls GET /v1/factory/jobs/{id} until the job is in `stage` (with an error set, when `orError`: a failed stage keeps its stage). */
export async function waitForStage(t: TestApp, key: string, id: string, stage: string, options: { orError?: boolean; timeoutMs?: number } = {}) {
  return eventually(
    async () => {
      const res = await getJob(t, key, id);
      if (res.status === 404) return false; // a job the worker has yet to create (JobCreation)
      if (res.status !== 200) throw new Error(`GET job: ${res.status} ${res.text}`);
      if (res.body.error && !options.orError) throw new Error(`job failed: ${JSON.stringify(res.body.error)}`);
      return res.body.stage === stage && (!options.orError || res.body.error) && res.body;
    },
    options.timeoutMs ?? 15000,
    `job ${id} in ${stage}`,
  );
}

export const jobAction = (t: TestApp, key: string, id: string, action: string, body?: unknown) =>
  t.request('POST', `/v1/factory/jobs/${id}/${action}`, { key, ...(body === undefined ? {} : { body }) });

/** The raw bytes behind a signed storage URL (TestApp.request decodes bodies as text): an S3 server's over HTTP, the local store's from the app. */
export async function fetchBytes(t: TestApp, url: string): Promise<Buffer> {
  const u = new URL(url);
  if (u.searchParams.has('X-Amz-Signature')) {
    const res = await fetch(url);
    if (res.status !== 200) throw new Error(`download failed: ${res.status}`);
    return Buffer.from(await res.arrayBuffer());
  }
  const res = await t.app.getHttpAdapter().getInstance().inject({ method: 'GET', url: `${u.pathname}${u.search}` });
  if (res.statusCode !== 200) throw new Error(`download failed: ${res.statusCode}`);
  return res.rawPayload;
}

export async function creditsLeft(t: TestApp, accountId: string, mode = 'test'): Promise<number> {
  const { rows } = await t.db.query<{ credits: number }>('SELECT credits FROM credit_balances WHERE account_id = $1 AND mode = $2', [accountId, mode]);
  return rows[0]?.credits ?? 0;
}
