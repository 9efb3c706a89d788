import { Injectable } from '@nestjs/common';
import { Position } from '../event-store/event-store';
import { StreamCommands } from '../event-store/stream-commands';
import { Errors } from '../platform/errors';
import type { Mode } from '../platform/mode';
import { Streams } from '../platform/streams';
import { EventWriter } from '../projection-runner/event-writer';
import { CheckoutCommand, checkoutDecider, CheckoutState, evolve } from './checkout.decider';
import type { CheckoutEvent, CheckoutSessionOpened } from './events';

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

/** The one way commerce touches checkout streams: the checkout decider, on the session's stream. */
@Injectable()
export class CheckoutStreams {
  private readonly commands: StreamCommands<CheckoutCommand, CheckoutEvent, CheckoutState | undefined>;

  constructor(private readonly writer: EventWriter) {
    this.commands = writer.commands(checkoutDecider);
  }

  async load(mode: Mode, sessionId: string): Promise<CheckoutState | undefined> {
    return (await this.commands.load(Streams.checkout(mode, sessionId))).state;
  }

  async open(opened: CheckoutSessionOpened): Promise<CheckoutState> {
    await this.writer.append(Streams.checkout(opened.mode, opened.session_id), [{ type: 'CheckoutSessionOpened', data: { ...opened } }], 'no_stream');
    return evolve(undefined, { type: 'CheckoutSessionOpened', data: opened })!;
  }

  /**
   * Decides `command(state)` on the session's stream. A lost race loads and decides again,
   * so of two concurrent completions the second finds the session complete.
   */
  async handle(mode: Mode, sessionId: string, command: (state: CheckoutState) => Promise<CheckoutCommand>): Promise<Handled> {
    const handled = await this.commands.handle(Streams.checkout(mode, sessionId), (state) => {
      if (!state) throw Errors.notFound('checkout session');
      return command(state);
    });
    return { state: handled.state!, recorded: handled.recorded, position: handled.position! };
  }
}
