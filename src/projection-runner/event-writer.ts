import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppendResult, EVENT_STORE, EventStore, ExpectedRevision, NewEvent, WrongExpectedRevisionError } from '../event-store/event-store';
import { ProjectionRunner } from './projection-runner';

/**
 * What command handlers use to record facts: append with an expected revision, then wait
 * (bounded) until the read models these events change have seen the append, so the caller
 * reads its write.
 */
@Injectable()
export class EventWriter {
  private readonly logger = new Logger('EventWriter');

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly projections: ProjectionRunner,
  ) {}

  async append(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    const result = await this.store.append(streamId, events, expected);
    // Only the read models these events change: a late one elsewhere delays nothing here.
    const affected = this.projections.handling(events.map((e) => e.type));
    if (!(await this.projections.waitFor(result.position, { projections: affected }))) {
      // The events are stored; only the read models are late. Answering is still correct.
      this.logger.warn(`read models did not reach ${result.position} in time (stream ${streamId})`);
    }
    return result;
  }

  /**
   * Runs a load-decide-append function, again from a fresh load when it lost an
   * optimistic-concurrency race; after the last attempt the conflict reaches the client as 409.
   */
  async retryOnConflict<T>(attempt: () => Promise<T>, attempts = 3): Promise<T> {
    for (let i = 1; ; i++) {
      try {
        return await attempt();
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError) || i >= attempts) throw error;
      }
    }
  }
}
