import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import { newId } from '../../platform/ids';
import { EndpointStreams } from '../endpoint-streams';
import type { EndpointOwner } from '../endpoint.decider';
import { publicEventId, TEST_EVENT_TYPE } from '../public-events';

export interface QueuedTestEvent {
  object: 'webhook_test';
  endpoint_id: string;
  event_id: string;
  event_type: typeof TEST_EVENT_TYPE;
  /** Its entry in the endpoint's delivery log, once the fan-out has queued it. */
  delivery_id: string;
}

export class SendTestWebhookCommand extends Command<QueuedTestEvent> {
  constructor(
    readonly owner: EndpointOwner,
    readonly endpointId: string,
  ) {
    super();
  }
}

/** Records the request; the fan-out turns it into the delivery (fan-out.ts), so it is sent and logged like any event. */
@CommandHandler(SendTestWebhookCommand)
export class SendTestWebhookHandler implements ICommandHandler<SendTestWebhookCommand> {
  constructor(private readonly endpoints: EndpointStreams) {}

  async execute({ owner, endpointId }: SendTestWebhookCommand): Promise<QueuedTestEvent> {
    const eventId = randomUUID();
    const deliveryId = newId('whd');
    await this.endpoints.handle(owner.mode, endpointId, { type: 'RequestTestEvent', owner, event_id: eventId, delivery_id: deliveryId, now: new Date().toISOString() });
    return { object: 'webhook_test', endpoint_id: endpointId, event_id: publicEventId(eventId), event_type: TEST_EVENT_TYPE, delivery_id: deliveryId };
  }
}
