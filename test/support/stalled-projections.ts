import { EVENT_STORE, EventStore } from '../../src/event-store/event-store';
import { ProjectionRunner } from '../../src/projection-runner/projection-runner';
import type { TestApp } from './app';

/**
 * Stops the app's projections, so every read model lags behind the streams as it does
 * behind a held horizon or a failing projection (issue 9). Read-your-writes then gives up
 * at once instead of after its bound: the answers are the same, the test is just faster.
 * resume() restarts the projections and waits until they have caught up.
 */
export async function stallProjections(t: TestApp): Promise<{ resume(): Promise<void> }> {
  const runner = t.app.get(ProjectionRunner);
  await runner.stop();
  const waitFor = runner.waitFor.bind(runner);
  const spy = jest.spyOn(runner, 'waitFor').mockImplementation((position, options) => waitFor(position, { ...options, timeoutMs: 0 }));
  return {
    async resume() {
      spy.mockRestore();
      await runner.start();
      const head = await t.app.get<EventStore>(EVENT_STORE).headPosition();
      if (!(await runner.waitFor(head, { timeoutMs: 10_000 }))) throw new Error('the projections did not catch up');
    },
  };
}
