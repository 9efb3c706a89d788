import { Logger } from '@nestjs/common';
import type { FactoryEngine } from '../../src/factory/engines/engine';
import { SandboxFactoryEngine } from '../../src/factory/engines/sandbox-engine';
import { evolveJob, jobDecider, JobState } from '../../src/factory/job.decider';
import { JobSteps } from '../../src/factory/job-steps';

/** A bug in an engine fails its job, never the worker (which would stall every other job). */
describe('job steps', () => {
  // The failures below are logged as errors on purpose; keep the test output quiet.
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['error', 'warn', 'log']));
  const created = evolveJob(undefined, { type: 'GenerationJobCreated', data: { job_id: 'job_x', account_id: 'acct_x', mode: 'test', prompt: 'a 6-DoF arm', at: new Date().toISOString() } })!;
  const analyzing: JobState = { ...created, stage: 'analyzing' };
  const broken: FactoryEngine = {
    name: 'sandbox',
    analyze: async () => {
      throw new TypeError("Cannot read properties of undefined (reading 'toLowerCase')");
    },
    plan: async () => {
      throw new TypeError('boom');
    },
  };
  // Analysis and planning never touch storage, so no artifact store is needed here.
  const steps = (engine: FactoryEngine) => new JobSteps(engine, engine, undefined as never);
  /** What the step's command records on the job at revision 1. */
  const recorded = async (engine: FactoryEngine, job: JobState) => jobDecider.decide((await steps(engine).next(job, 1))!, { job, revision: 1, rebuilds: [] });

  test('an unexpected engine error becomes GenerationJobFailed with engine_failed', async () => {
    const [failed] = await recorded(broken, analyzing);
    expect(failed.type).toBe('GenerationJobFailed');
    expect(failed.data).toMatchObject({ stage: 'analyzing', error: { code: 'engine_failed', message: expect.stringMatching(/sandbox engine failed unexpectedly/) } });
    const [planFailed] = await recorded(broken, { ...created, stage: 'planning' });
    expect(planFailed.data).toMatchObject({ stage: 'planning', error: { code: 'engine_failed' } });
  });

  test('the sandbox moves a clear prompt from analyzing to planning', async () => {
    const [next] = await recorded(new SandboxFactoryEngine(), analyzing);
    expect(next.type).toBe('GenerationJobPlanningStarted');
  });
});
