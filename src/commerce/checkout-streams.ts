import { Inject, Injectable } from '@nestjs/common';
import { EVENT_STORE, EventStore, Position, RecordedEvent } from '../event-store/event-store';
import { Errors } from '../platform/errors';
import type { Mode } from '../platform/mode';
import { Streams } from '../platform/streams';
import { EventWriter } from '../projection-runner/event-writer';
import { CheckoutCommand, CheckoutState, decide, evolve, fold } from './checkout';
import type { CheckoutEvent, CheckoutSessionOpened } from './events';

const toCheckoutEvent = (event: RecordedEvent) => ({ type: event.type, data: event.data }) as CheckoutEvent;

interface Handled {
  state: CheckoutState;
  recorded: CheckoutEvent[];
  /**
   * Where the session's history ends now: the recorded events', or, when nothing was
   * recorded, its last event's. A caller waits on it, so that a payment answered as a
   * duplicate reads the purchase another payment completed a moment before.
   */
  position: Position;
}

/** The one way commerce touches checkout streams: load, decide, append at the loaded revision. */
@Injectable()
export class CheckoutStreams {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly writer: EventWriter,
  ) {}

  async load(mode: Mode, sessionId: string): Promise<CheckoutState | undefined> {
    return fold((await this.store.readStream(Streams.checkout(mode, sessionId))).map(toCheckoutEvent));
  }

  async open(opened: CheckoutSessionOpened): Promise<CheckoutState> {
    await this.writer.append(Streams.checkout(opened.mode, opened.session_id), [{ type: 'CheckoutSessionOpened', data: { ...opened } }], 'no_stream');
    return evolve(undefined, { type: 'CheckoutSessionOpened', data: opened })!;
  }

  /**
   * Decides `command(state)` on the session's stream. A lost race reloads and decides
   * again, so of two concurrent completions the second finds the session complete.
   */
  handle(mode: Mode, sessionId: string, command: (state: CheckoutState) => Promise<CheckoutCommand>): Promise<Handled> {
    const stream = Streams.checkout(mode, sessionId);
    return this.writer.retryOnConflict(async () => {
      const history = await this.store.readStream(stream);
      let state = fold(history.map(toCheckoutEvent));
      if (!state) throw Errors.notFound('checkout session');
      const recorded = decide(await command(state), state);
      if (!recorded.length) return { state, recorded, position: history[history.length - 1].position };
      const { position } = await this.writer.append(stream, recorded.map((e) => ({ type: e.type, data: { ...e.data } })), history[history.length - 1].revision);
      for (const event of recorded) state = evolve(state, event)!;
      return { state, recorded, position };
    });
  }
}
