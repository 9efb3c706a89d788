import { Injectable } from '@nestjs/common';
import { RecordedEvent } from '../event-store/event-store';
import { StreamCommands } from '../event-store/stream-commands';
import { KeptStates } from '../platform/kept-states';
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
 * The one way ledger commands touch the event store: the ledger decider on the account's
 * ledger stream. A lost race reloads and decides again, so two concurrent payouts see each
 * other and the second finds no balance left.
 *
 * A ledger grows with every sale, so its folded state is kept and only the events after
 * it are read (from this or any other process): a sale costs the same on a ledger of ten
 * thousand entries as on an empty one. evolve extends the state in place, so commands on
 * one ledger take turns in this process and read the state they need before the next.
 */
@Injectable()
export class LedgerStreams {
  private readonly commands: StreamCommands<LedgerCommand, LedgerEvent, LedgerState>;

  constructor(writer: EventWriter) {
    this.commands = writer.commands(
      { initialState, evolve, decide },
      // Weighed by entries, plus one: a ledger with none still takes some memory.
      { kept: new KeptStates<LedgerState>(KEPT_LEDGER_ENTRIES), weigh: (state) => state.entries.length + 1, evolvesInPlace: true },
    );
  }

  /**
   * Decides the command on the ledger's current state, appends what it recorded, and
   * returns `view` of the state after it and of the events recorded ([] for none).
   */
  async handle<T>(command: LedgerCommand, view: (state: LedgerState, recorded: LedgerEvent[]) => T): Promise<T> {
    const handled = await this.commands.handle(Streams.ledger(command.mode, command.account_id), command);
    // Synchronously, before anything is awaited: the next command on this ledger starts after
    // this one's promise settles, and extends the same state object in place.
    return view(handled.state, handled.recorded);
  }
}
