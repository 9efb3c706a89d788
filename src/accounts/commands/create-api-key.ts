import { Command, CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Errors } from '../../platform/errors';
import { newId } from '../../platform/ids';
import type { Mode } from '../../platform/mode';
import { Streams } from '../../platform/streams';
import { EventWriter } from '../../projection-runner/event-writer';
import { AccountStreams } from '../account-streams';
import { generateApiKey } from '../api-key-secret';
import { AccountEvents, ApiKeyCreated, Tier } from '../events';
import { openKeyActivation } from './open-key-activation';

export interface CreatedApiKey {
  id: string;
  /** The secret key, shown only in this response. */
  key: string;
  name: string;
  mode: Mode;
  tier: Tier;
  scopes: string[];
  active: boolean;
  expires_at: string | null;
  activation_checkout_url: string | null;
}

export class CreateApiKeyCommand extends Command<CreatedApiKey> {
  constructor(
    readonly account: string,
    readonly mode: Mode,
    readonly tier: Tier,
    readonly scopes: string[],
    readonly name: string,
    readonly expiresAt: Date | null,
  ) {
    super();
  }
}

@CommandHandler(CreateApiKeyCommand)
export class CreateApiKeyHandler implements ICommandHandler<CreateApiKeyCommand> {
  constructor(
    private readonly accounts: AccountStreams,
    private readonly writer: EventWriter,
    private readonly commands: CommandBus,
  ) {}

  async execute(command: CreateApiKeyCommand): Promise<CreatedApiKey> {
    const account = await this.accounts.get(command.account);
    if (command.expiresAt && command.expiresAt.getTime() <= Date.now()) {
      throw Errors.validationFailed('Invalid field "expires_at": must be in the future.');
    }
    const scopes = [...new Set(command.scopes)];
    // Spec section 5: inference:run is for premium keys only; a free key with it would only ever get 403.
    if (command.tier !== 'premium' && scopes.includes('inference:run')) {
      throw Errors.validationFailed('Invalid field "scopes": inference:run is for premium keys only; create the key with tier "premium" (svc keys create --tier premium).');
    }
    // Premium keys always carry inference:run; an empty list is already unrestricted.
    if (command.tier === 'premium' && scopes.length && !scopes.includes('inference:run')) scopes.push('inference:run');
    // A live premium key waits for its one-time activation payment; test premium is free.
    const active = !(command.tier === 'premium' && command.mode === 'live');
    const keyId = newId('key');
    const { key, lookupId, secretHash } = generateApiKey(command.mode);
    const created: ApiKeyCreated = {
      key_id: keyId,
      account_id: account.id,
      mode: command.mode,
      tier: command.tier,
      name: command.name,
      scopes,
      lookup_id: lookupId,
      secret_hash: secretHash,
      active,
      expires_at: command.expiresAt?.toISOString() ?? null,
      created_at: new Date().toISOString(),
    };
    await this.writer.append(Streams.apiKey(command.mode, keyId), [{ type: AccountEvents.ApiKeyCreated, data: { ...created } }], 'no_stream');
    // After the key exists, so the payment always has a key to activate.
    const activation = active ? null : await openKeyActivation(this.commands, this.writer, { key_id: keyId, account_id: account.id, mode: command.mode });
    return {
      id: keyId,
      key,
      name: created.name,
      mode: created.mode,
      tier: created.tier,
      scopes,
      active,
      expires_at: created.expires_at,
      activation_checkout_url: activation?.activation_checkout_url ?? null,
    };
  }
}
