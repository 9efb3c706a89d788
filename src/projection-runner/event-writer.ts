import { Inject, Injectable, Logger } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import { AppendResult, EVENT_STORE, EventStore, ExpectedRevision, NewEvent, Position } from '../event-store/event-store';
import { Decider, DomainEvent, StreamCommands, StreamCommandsOptions } from '../event-store/stream-commands';
import { ProjectionRunner } from './projection-runner';

/** The read models a run of appends changed, and how far: waited for once, at its end. */
interface GatheredWait {
  position: Position | null;
  projections: Set<string>;
}

/**
 * What command handlers use to record facts: append with an expected revision, then wait
 * (bounded) until the read models these events change have seen the append, so the caller
 * reads its write.
 */
@Injectable()
export class EventWriter {
  private readonly logger = new Logger('EventWriter');
  private readonly gathered = new AsyncLocalStorage<GatheredWait>();

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly projections: ProjectionRunner,
  ) {}

  async append(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    const result = await this.store.append(streamId, events, expected);
    // Only the read models these events change: a late one elsewhere delays nothing here.
    const affected = this.projections.handling(events.map((e) => e.type));
    const gathering = this.gathered.getStore();
    if (gathering) {
      if (!gathering.position || result.position > gathering.position) gathering.position = result.position;
      for (const name of affected) gathering.projections.add(name);
    } else {
      await this.waitFor(result.position, affected, `stream ${streamId}`);
    }
    return result;
  }

  /**
   * Runs fn with the read-your-writes waits of its appends gathered into one wait at its
   * end: a subscriber recording the consequences of a batch of events waits once for the
   * batch, not once per event, and still moves on only when they are readable.
   */
  async gatheringWaits<T>(fn: () => Promise<T>): Promise<T> {
    const gathering: GatheredWait = { position: null, projections: new Set() };
    const result = await this.gathered.run(gathering, fn);
    if (gathering.position) await this.waitFor(gathering.position, [...gathering.projections], 'a batch of appends');
    return result;
  }

  private async waitFor(position: Position, projections: string[], what: string): Promise<void> {
    if (!(await this.projections.waitFor(position, { projections }))) {
      // The events are stored; only the read models are late. Answering is still correct.
      this.logger.warn(`read models did not reach ${position} in time (${what})`);
    }
  }

  /**
   * The command runner for one decider's streams (see StreamCommands), appending through
   * this writer: a command's caller reads its write.
   */
  commands<Command, Event extends DomainEvent, State>(decider: Decider<Command, Event, State>, options: Omit<StreamCommandsOptions<State>, 'append'> = {}): StreamCommands<Command, Event, State> {
    return new StreamCommands(this.store, decider, { ...options, append: (streamId, events, expected) => this.append(streamId, events, expected) });
  }
}
