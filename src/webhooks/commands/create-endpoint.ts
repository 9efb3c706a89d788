import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Errors } from '../../platform/errors';
import { newId, randomBase62 } from '../../platform/ids';
import type { Mode } from '../../platform/mode';
import { Streams } from '../../platform/streams';
import { EventWriter } from '../../projection-runner/event-writer';
import type { WebhookEndpointView } from '../endpoint-queries';
import { evolveEndpoint, toEndpointView } from '../endpoint-streams';
import { WebhookEndpointCreated, WebhookEvents } from '../events';
import { isPublicEventType } from '../public-events';
import { SecretBox } from '../secret-box';
import { checkEndpointUrl } from '../url-policy';

export const SECRET_BOX = Symbol('SecretBox');

export type CreatedWebhookEndpoint = WebhookEndpointView & { secret: string };

export class CreateWebhookEndpointCommand extends Command<CreatedWebhookEndpoint> {
  constructor(
    readonly accountId: string,
    readonly mode: Mode,
    readonly url: string,
    readonly events: string[],
    readonly description: string,
  ) {
    super();
  }
}

/** Unknown event types are silently dropped (spec part 4); duplicates collapse. */
export function knownEventTypes(events: string[]): string[] {
  return [...new Set(events.filter(isPublicEventType))];
}

/** The URL to store (normalised), or a validation error naming the field. */
export async function safeUrl(mode: Mode, url: string): Promise<string> {
  const checked = await checkEndpointUrl(mode, url);
  if ('problem' in checked) throw Errors.validationFailed(`Invalid field "url": ${checked.problem}.`);
  return checked.url;
}

@CommandHandler(CreateWebhookEndpointCommand)
export class CreateWebhookEndpointHandler implements ICommandHandler<CreateWebhookEndpointCommand> {
  constructor(
    private readonly writer: EventWriter,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
  ) {}

  async execute(command: CreateWebhookEndpointCommand): Promise<CreatedWebhookEndpoint> {
    const url = await safeUrl(command.mode, command.url);
    const id = newId('we');
    const secret = `whsec_${command.mode}_${randomBase62(32)}`;
    const created: WebhookEndpointCreated = {
      endpoint_id: id,
      account_id: command.accountId,
      mode: command.mode,
      url,
      events: knownEventTypes(command.events),
      description: command.description,
      enabled: true,
      secret_sealed: this.box.seal(secret, id),
      created_at: new Date().toISOString(),
    };
    const event = { type: WebhookEvents.WebhookEndpointCreated, data: { ...created } };
    await this.writer.append(Streams.webhookEndpoint(command.mode, id), [event], 'no_stream');
    // From the event just written, not the read model, which may still be behind.
    return { ...toEndpointView(evolveEndpoint(undefined, event)!), secret };
  }
}
