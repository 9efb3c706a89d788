import { Inject, Injectable } from '@nestjs/common';
import { EVENT_STORE, EventStore, RecordedEvent } from '../event-store/event-store';
import { Folded, KeptStates } from '../platform/kept-states';
import { Streams } from '../platform/streams';
import { EventWriter } from '../projection-runner/event-writer';
import { LEDGER_EVENT_TYPES, LedgerEvent } from './events';
import { decide, evolve, initialState, LedgerCommand, LedgerState } from './ledger.decider';

export function isLedgerEvent(event: RecordedEvent): boolean {
  return (LEDGER_EVENT_TYPES as readonly string[]).includes(event.type);
}

export function toLedgerEvent(event: RecordedEvent): LedgerEvent {
  return { type: event.type, data: event.data } as LedgerEvent;
}

/**
 * How many ledger entries (sales, refunds, payouts) this process keeps folded between
 * commands: about 420 bytes of heap an entry, so about 40 MB.
 */
export const KEPT_LEDGER_ENTRIES = 100_000;

/**
 * The one way ledger commands touch the event store: load the stream, decide, append
 * with the expected revision. A lost race reloads and decides again, so two concurrent
 * payouts see each other and the second finds no balance left.
 *
 * A ledger grows with every sale, so its folded state is kept and only the events after
 * it are read (from this or any other process): a sale costs the same on a ledger of ten
 * thousand entries as on an empty one. evolve extends the state in place, so commands on
 * one ledger take turns in this process and read the state they need before the next.
 */
@Injectable()
export class LedgerStreams {
  private readonly kept = new KeptStates<LedgerState>(KEPT_LEDGER_ENTRIES);
  private readonly turns = new Map<string, Promise<unknown>>();

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly writer: EventWriter,
  ) {}

  /**
   * Decides the command on the ledger's current state, appends what it recorded, and
   * returns `view` of the state after it and of the events recorded ([] for none).
   */
  handle<T>(command: LedgerCommand, view: (state: LedgerState, recorded: LedgerEvent[]) => T): Promise<T> {
    const stream = Streams.ledger(command.mode, command.account_id);
    return this.inTurn(stream, () =>
      this.writer.retryOnConflict(async () => {
        const { state, revision } = await this.load(stream);
        const recorded = decide(command, state);
        if (!recorded.length) return view(state, recorded);
        const expected = revision >= 0 ? revision : 'no_stream';
        const appended = await this.writer.append(stream, recorded.map((e) => ({ type: e.type, data: { ...e.data } })), expected);
        return view(this.extend(stream, state, recorded, appended.nextRevision).state, recorded);
      }),
    );
  }

  /** The ledger's state at its newest revision: the kept state and the events since. */
  private async load(stream: string): Promise<Folded<LedgerState>> {
    const kept = this.kept.get(stream) ?? { state: initialState(), revision: -1 };
    const since = await this.store.readStream(stream, { fromRevision: kept.revision + 1 });
    if (!since.length) return this.keep(stream, kept);
    return this.extend(stream, kept.state, since.map(toLedgerEvent), since[since.length - 1].revision);
  }

  private extend(stream: string, state: LedgerState, events: LedgerEvent[], revision: number): Folded<LedgerState> {
    // evolve changes the kept state as it goes: half-applied, it must not be kept.
    this.kept.drop(stream);
    for (const event of events) state = evolve(state, event);
    return this.keep(stream, { state, revision });
  }

  private keep(stream: string, folded: Folded<LedgerState>): Folded<LedgerState> {
    // Weighed by entries, plus one: a ledger with none still takes some memory.
    this.kept.keep(stream, folded, folded.state.entries.length + 1);
    return folded;
  }

  /** Runs fn after every command on this stream that came before it in this process. */
  private inTurn<T>(stream: string, fn: () => Promise<T>): Promise<T> {
    const mine = (this.turns.get(stream) ?? Promise.resolve()).then(fn);
    // The next command waits for this one to end, whether it failed or not.
    const settled = mine.catch(() => undefined);
    this.turns.set(stream, settled);
    void settled.then(() => {
      if (this.turns.get(stream) === settled) this.turns.delete(stream);
    });
    return mine;
  }
}
