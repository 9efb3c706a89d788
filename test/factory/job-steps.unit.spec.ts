import { Logger } from '@nestjs/common';
import type { FactoryEngine } from '../../src/factory/engines/engine';
import { SandboxFactoryEngine } from '../../src/factory/engines/sandbox-engine';
import { FactoryEvents } from '../../src/factory/events';
import { evolve, JobState } from '../../src/factory/job';
import { JobSteps } from '../../src/factory/job-steps';

/** A bug in an engine fails its job, never the worker (which would stall every other job). */
describe('job steps', () => {
  // The failures below are logged as errors on purpose; keep the test output quiet.
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['error', 'warn', 'log']));
  const created = evolve(undefined, { type: FactoryEvents.GenerationJobCreated, data: { job_id: 'job_x', account_id: 'acct_x', mode: 'test', prompt: 'a 6-DoF arm', at: new Date().toISOString() } })!;
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

  test('an unexpected engine error becomes GenerationJobFailed with engine_failed', async () => {
    const [failed] = await steps(broken).next(analyzing);
    expect(failed.type).toBe(FactoryEvents.GenerationJobFailed);
    expect(failed.data).toMatchObject({ stage: 'analyzing', error: { code: 'engine_failed', message: expect.stringMatching(/sandbox engine failed unexpectedly/) } });
    const [planFailed] = await steps(broken).next({ ...created, stage: 'planning' });
    expect(planFailed.data).toMatchObject({ stage: 'planning', error: { code: 'engine_failed' } });
  });

  test('the sandbox moves a clear prompt from analyzing to planning', async () => {
    const [next] = await steps(new SandboxFactoryEngine()).next(analyzing);
    expect(next.type).toBe(FactoryEvents.GenerationJobPlanningStarted);
  });
});
