/**
 * The one way a context decides on a stream: load (fold the stream's events), decide
 * (a pure decider: command and state in, new events out), append at the loaded revision,
 * and on a lost race load again and decide again. Emmett's CommandHandler, Marten's
 * aggregate handlers: the business rules stay in deciders with no I/O, and this loop is
 * written once.
 */
import type { Folded, KeptStates } from '../platform/kept-states';
import { AppendResult, EventStore, ExpectedRevision, NewEvent, Position, RecordedEvent, WrongExpectedRevisionError } from './event-store';

/** A fact as a decider sees it: its type and its data (the event store adds id, revision, position). */
export interface DomainEvent<Type extends string = string, Data extends object = object> {
  type: Type;
  data: Data;
}

export interface Decider<Command, Event extends DomainEvent, State> {
  initialState(): State;
  /** The state after one more event. Events of types it does not know leave the state as it was. */
  evolve(state: State, event: Event): State;
  /** The events that record the command, [] for none; throws an ApiError to refuse it. */
  decide(command: Command, state: State): Event[];
}

export interface Handled<State, Event> {
  /** The state after the recorded events. */
  state: State;
  recorded: Event[];
  /** Revision of the stream's last event now: -1 while it has none. */
  revision: number;
  /** Where the stream's history ends now (null: it has none), for a read-your-writes wait. */
  position: Position | null;
}

export interface StreamCommandsOptions<State> {
  /** How appends are made: EventWriter's adds the wait for the read models (read-your-writes). */
  append?: (streamId: string, events: readonly NewEvent[], expected: ExpectedRevision) => Promise<AppendResult>;
  /** Tries before a lost race reaches the caller (409 conflict). */
  attempts?: number;
  /**
   * Streams that grow for ever (a ledger, a listing with every download): their folded
   * state is kept, and a load reads only the events after it.
   */
  kept?: KeptStates<State>;
  /** What a kept state weighs, in the unit of kept's limit (default 1). */
  weigh?: (state: State) => number;
  /**
   * The decider's evolve changes the state it is given: commands on one stream then take
   * turns in this process, and a half-extended state is never kept.
   */
  evolvesInPlace?: boolean;
}

/** A folded stream: its state, last revision (-1: none) and last position (null: none). */
export interface Loaded<State> extends Folded<State> {
  position: Position | null;
}

const DEFAULT_ATTEMPTS = 3;

export class StreamCommands<Command, Event extends DomainEvent, State> {
  private readonly turns = new Map<string, Promise<unknown>>();
  private readonly appendEvents: NonNullable<StreamCommandsOptions<State>['append']>;

  constructor(
    private readonly store: EventStore,
    private readonly decider: Decider<Command, Event, State>,
    private readonly options: StreamCommandsOptions<State> = {},
  ) {
    this.appendEvents = options.append ?? ((streamId, events, expected) => store.append(streamId, events, expected));
  }

  /** The stream's state at its newest revision. */
  async load(streamId: string): Promise<Loaded<State>> {
    const kept = this.options.kept?.get(streamId);
    const from: Loaded<State> = kept ? { ...kept, position: kept.position ?? null } : { state: this.decider.initialState(), revision: -1, position: null };
    const since = await this.store.readStream(streamId, { fromRevision: from.revision + 1 });
    // Kept again even when nothing is new: a stream in use stays among the most recent.
    if (!since.length) return this.keep(streamId, from);
    const last = since[since.length - 1];
    return this.extend(streamId, from.state, since.map(toDomainEvent) as Event[], last.revision, last.position);
  }

  /**
   * Decides the command on the stream's current state and appends what it recorded. The
   * command may be a function of the state (a lookup the decision needs, made afresh on
   * every attempt). A lost race loads and decides again, up to `attempts` times.
   *
   * `loaded`: the stream as the caller just loaded it (to find it, or check who owns it),
   * decided on at once instead of loaded again; if it is no longer the newest, the append
   * loses the race and the retry loads afresh. Not taken where evolve changes states in place.
   */
  handle(streamId: string, command: Command | ((state: State) => Command | Promise<Command>), loaded?: Loaded<State>): Promise<Handled<State, Event>> {
    if (this.options.evolvesInPlace) {
      return this.inTurn(streamId, () => this.retryOnConflict(() => this.attempt(streamId, command)));
    }
    let from = loaded;
    return this.retryOnConflict(() => {
      const given = from;
      from = undefined;
      return this.attempt(streamId, command, given);
    });
  }

  private async attempt(
    streamId: string,
    command: Command | ((state: State) => Command | Promise<Command>),
    given?: Loaded<State>,
  ): Promise<Handled<State, Event>> {
    const loaded = given ?? (await this.load(streamId));
    const decided = typeof command === 'function' ? await (command as (state: State) => Command | Promise<Command>)(loaded.state) : command;
    const recorded = this.decider.decide(decided, loaded.state);
    if (!recorded.length) return { state: loaded.state, recorded, revision: loaded.revision, position: loaded.position };
    const expected: ExpectedRevision = loaded.revision >= 0 ? loaded.revision : 'no_stream';
    // A copy of each event's data: the caller's objects stay its own once they are stored.
    const appended = await this.appendEvents(streamId, recorded.map((e) => ({ type: e.type, data: { ...e.data } })), expected);
    const after = this.extend(streamId, loaded.state, recorded, appended.nextRevision, appended.position);
    return { state: after.state, recorded, revision: after.revision, position: after.position };
  }

  private async retryOnConflict<T>(attempt: () => Promise<T>): Promise<T> {
    const attempts = this.options.attempts ?? DEFAULT_ATTEMPTS;
    for (let i = 1; ; i++) {
      try {
        return await attempt();
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError) || i >= attempts) throw error;
      }
    }
  }

  private extend(streamId: string, state: State, events: Event[], revision: number, position: Position): Loaded<State> {
    // An evolve that changes its state as it goes must not leave a half-applied one kept.
    if (this.options.evolvesInPlace) this.options.kept?.drop(streamId);
    for (const event of events) state = this.decider.evolve(state, event);
    return this.keep(streamId, { state, revision, position });
  }

  private keep(streamId: string, loaded: Loaded<State>): Loaded<State> {
    const kept = this.options.kept;
    // A load that ran beside this one may have kept a later revision already.
    if (kept && loaded.revision >= 0 && loaded.revision >= (kept.get(streamId)?.revision ?? -1)) kept.keep(streamId, loaded, this.options.weigh?.(loaded.state) ?? 1);
    return loaded;
  }

  /** Runs fn after every command on this stream that came before it in this process. */
  private inTurn<T>(streamId: string, fn: () => Promise<T>): Promise<T> {
    const mine = (this.turns.get(streamId) ?? Promise.resolve()).then(fn);
    // The next command waits for this one to end, whether it failed or not.
    const settled = mine.catch(() => undefined);
    this.turns.set(streamId, settled);
    void settled.then(() => {
      if (this.turns.get(streamId) === settled) this.turns.delete(streamId);
    });
    return mine;
  }
}

/** A stored event as its decider's union member: type and data (the union is the decider's to trust). */
export function toDomainEvent(event: RecordedEvent): DomainEvent {
  return { type: event.type, data: event.data as object };
}
