import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Errors } from '../../platform/errors';
import { newId, randomBase62 } from '../../platform/ids';
import type { Mode } from '../../platform/mode';
import type { WebhookEndpointView } from '../endpoint-queries';
import { EndpointStreams, toEndpointView } from '../endpoint-streams';
import { SecretBox } from '../../platform/secret-box';
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

/** A new signing secret; its prefix names the mode (spec part 5). */
export const newSigningSecret = (mode: Mode) => `whsec_${mode}_${randomBase62(32)}`;

/** The URL to store (normalised), or a validation error naming the field. */
export async function safeUrl(mode: Mode, url: string): Promise<string> {
  const checked = await checkEndpointUrl(mode, url);
  if ('problem' in checked) throw Errors.validationFailed(`Invalid field "url": ${checked.problem}.`);
  return checked.url;
}

@CommandHandler(CreateWebhookEndpointCommand)
export class CreateWebhookEndpointHandler implements ICommandHandler<CreateWebhookEndpointCommand> {
  constructor(
    private readonly endpoints: EndpointStreams,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
  ) {}

  async execute(command: CreateWebhookEndpointCommand): Promise<CreatedWebhookEndpoint> {
    const url = await safeUrl(command.mode, command.url);
    const id = newId('we');
    const secret = newSigningSecret(command.mode);
    const { state } = await this.endpoints.handle(command.mode, id, {
      type: 'CreateEndpoint',
      endpoint_id: id,
      account_id: command.accountId,
      mode: command.mode,
      url,
      events: command.events,
      description: command.description,
      secret_sealed: this.box.seal(secret, id),
      now: new Date().toISOString(),
    });
    // From the event just written, not the read model, which may still be behind.
    return { ...toEndpointView(state!), secret };
  }
}
