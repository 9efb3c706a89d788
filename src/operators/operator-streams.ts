import { Injectable } from '@nestjs/common';
import type { Handled, StreamCommands } from '../event-store/stream-commands';
import { Streams } from '../platform/streams';
import { EventWriter } from '../projection-runner/event-writer';
import { OperatorCommand, operatorDecider, OperatorEvent, OperatorState } from './operator.decider';

/** Commands on operators' streams, decided on the stream (never on the read model) and appended through the EventWriter. */
@Injectable()
export class OperatorStreams {
  private readonly operators: StreamCommands<OperatorCommand, OperatorEvent, OperatorState>;

  constructor(writer: EventWriter) {
    this.operators = writer.commands(operatorDecider);
  }

  on(name: string, command: OperatorCommand): Promise<Handled<OperatorState, OperatorEvent>> {
    return this.operators.handle(Streams.operator(name), command);
  }
}
