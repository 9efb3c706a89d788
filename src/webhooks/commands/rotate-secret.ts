import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { WebhookEndpointView } from '../endpoint-queries';
import { EndpointStreams, toEndpointView } from '../endpoint-streams';
import type { EndpointOwner } from '../endpoint.decider';
import { SecretBox } from '../../platform/secret-box';
import { newSigningSecret, SECRET_BOX } from './create-endpoint';

/** Stripe's default for rolling an endpoint secret: the old one keeps signing for a day. */
export const DEFAULT_PREVIOUS_SECRET_SECONDS = 86_400;
export const MAX_PREVIOUS_SECRET_SECONDS = 7 * 86_400;

export type RotatedWebhookEndpoint = WebhookEndpointView & { secret: string; previous_secret_expires_at: string | null };

export class RotateWebhookSecretCommand extends Command<RotatedWebhookEndpoint> {
  constructor(
    readonly owner: EndpointOwner,
    readonly endpointId: string,
    readonly expiresInSeconds: number,
  ) {
    super();
  }
}

@CommandHandler(RotateWebhookSecretCommand)
export class RotateWebhookSecretHandler implements ICommandHandler<RotateWebhookSecretCommand> {
  constructor(
    private readonly endpoints: EndpointStreams,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
  ) {}

  async execute({ owner, endpointId, expiresInSeconds }: RotateWebhookSecretCommand): Promise<RotatedWebhookEndpoint> {
    const secret = newSigningSecret(owner.mode);
    const { state } = await this.endpoints.handle(owner.mode, endpointId, {
      type: 'RotateSecret',
      owner,
      secret_sealed: this.box.seal(secret, endpointId),
      expires_in_seconds: expiresInSeconds,
      now: new Date().toISOString(),
    });
    // Like create, the only answer that ever shows this secret.
    return { ...toEndpointView(state!), secret, previous_secret_expires_at: state!.previous_secret_expires_at ?? null };
  }
}
