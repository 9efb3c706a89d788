import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Streams } from '../../platform/streams';
import { EventWriter } from '../../projection-runner/event-writer';
import { InferenceEvents, InferencePriceSet } from '../events';
import { InferenceModel, Price } from '../model-catalog';
import { ModelListing, toModelListing } from '../prices';

export class SetInferencePriceCommand extends Command<ModelListing> {
  constructor(readonly model: InferenceModel, readonly price: Price) {
    super();
  }
}

/**
 * `svc inference price`: a price is an event on the model's price stream, never an edit, so
 * every call's charge can be traced to the price in force when it started.
 */
@CommandHandler(SetInferencePriceCommand)
export class SetInferencePriceHandler implements ICommandHandler<SetInferencePriceCommand> {
  constructor(private readonly writer: EventWriter) {}

  async execute({ model, price }: SetInferencePriceCommand): Promise<ModelListing> {
    const event: InferencePriceSet = { model: model.id, ...price, set_at: new Date().toISOString() };
    // A price history has no invariant between its entries: the last one set is in force.
    await this.writer.append(Streams.inferencePrice(model.id), [{ type: InferenceEvents.InferencePriceSet, data: { ...event } }], 'any');
    // Answered from the event: the price read model may still be catching up.
    return toModelListing(model, price);
  }
}
