import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ACTIVATION_CHECKOUT, ActivationCheckout } from '../activation-checkout';
import { newId } from '../../platform/ids';
import type { Mode } from '../../platform/mode';
import { AccountStreams } from '../account-streams';
import { generateApiKey } from '../api-key-secret';
import type { Tier } from '../events';
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
    @Inject(ACTIVATION_CHECKOUT) private readonly checkout: ActivationCheckout,
  ) {}

  async execute(command: CreateApiKeyCommand): Promise<CreatedApiKey> {
    const account = await this.accounts.get(command.account);
    const keyId = newId('key');
    const { key, lookupId, secretHash } = generateApiKey(command.mode);
    // The decider checks the expiry and the scopes, and decides whether the key starts active.
    const { state } = await this.accounts.onKey(command.mode, keyId, {
      type: 'CreateApiKey',
      key_id: keyId,
      account_id: account.id,
      mode: command.mode,
      tier: command.tier,
      name: command.name,
      scopes: command.scopes,
      lookup_id: lookupId,
      secret_hash: secretHash,
      expires_at: command.expiresAt?.toISOString() ?? null,
      now: new Date().toISOString(),
    });
    const created = state.created!;
    // After the key exists, so the payment always has a key to activate.
    const activation = created.active ? null : await openKeyActivation(this.checkout, this.accounts, { key_id: keyId, account_id: account.id, mode: command.mode });
    return {
      id: keyId,
      key,
      name: created.name,
      mode: created.mode,
      tier: created.tier,
      scopes: created.scopes,
      active: created.active,
      expires_at: created.expires_at,
      activation_checkout_url: activation?.activation_checkout_url ?? null,
    };
  }
}
