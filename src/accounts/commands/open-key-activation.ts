import { ApiError } from '../../platform/errors';
import { Command, CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { OpenKeyActivationCheckoutCommand } from '../../commerce/commands/open-checkout';
import { Streams } from '../../platform/streams';
import { EventWriter } from '../../projection-runner/event-writer';
import { AccountStreams } from '../account-streams';
import { AccountEvents, ApiKeyActivationOpened } from '../events';

export interface KeyActivation {
  id: string;
  active: false;
  activation_checkout_url: string;
  activation_expires_at: string;
}

/**
 * Opens the activation checkout of an inactive live premium key and records where its owner
 * pays (ApiKeyActivationOpened, which `svc keys list` shows until it lapses).
 */
export async function openKeyActivation(
  commands: CommandBus,
  writer: EventWriter,
  key: { key_id: string; account_id: string; mode: ApiKeyActivationOpened['mode'] },
): Promise<KeyActivation> {
  const session = await commands.execute(new OpenKeyActivationCheckoutCommand(key.account_id, key.mode, key.key_id));
  const opened: ApiKeyActivationOpened = {
    ...key,
    checkout_session_id: session.id,
    checkout_url: session.checkout_url,
    expires_at: new Date(Number(session.expires_at) * 1000).toISOString(),
    opened_at: new Date().toISOString(),
  };
  // 'any': a fact about a checkout already opened; a payment landing meanwhile must not fail it.
  await writer.append(Streams.apiKey(key.mode, key.key_id), [{ type: AccountEvents.ApiKeyActivationOpened, data: { ...opened } }], 'any');
  return { id: key.key_id, active: false, activation_checkout_url: opened.checkout_url, activation_expires_at: opened.expires_at };
}

/**
 * `svc keys activation KEY_ID`: a fresh activation checkout for a live premium key whose last
 * one lapsed unpaid (a checkout expires after 30 minutes). A key that is active, revoked or
 * not premium has nothing to activate.
 */
export class OpenKeyActivationCommand extends Command<KeyActivation> {
  constructor(readonly keyId: string) {
    super();
  }
}

@CommandHandler(OpenKeyActivationCommand)
export class OpenKeyActivationHandler implements ICommandHandler<OpenKeyActivationCommand> {
  constructor(
    private readonly accounts: AccountStreams,
    private readonly writer: EventWriter,
    private readonly commands: CommandBus,
  ) {}

  async execute({ keyId }: OpenKeyActivationCommand): Promise<KeyActivation> {
    const key = await this.accounts.loadKey(keyId);
    if (key.revoked) throw new ApiError(400, 'key_revoked', `API key ${keyId} is revoked; create a new key.`);
    if (key.active) throw new ApiError(400, 'already_active', `API key ${keyId} is active already; only an inactive live premium key has an activation to pay.`);
    return openKeyActivation(this.commands, this.writer, { key_id: key.created.key_id, account_id: key.created.account_id, mode: key.mode });
  }
}
