import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { Mode } from '../../platform/mode';
import { AccountStreams } from '../account-streams';
import { ACTIVATION_CHECKOUT, ActivationCheckout } from '../activation-checkout';
import { assertActivationOpenable } from '../api-key.decider';

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
  checkout: ActivationCheckout,
  accounts: AccountStreams,
  key: { key_id: string; account_id: string; mode: Mode },
): Promise<KeyActivation> {
  const session = await checkout.open(key);
  const expiresAt = new Date(session.expires_at * 1000).toISOString();
  // Recorded whatever happened to the key since: the checkout is open, and a payment landing meanwhile must not fail it.
  await accounts.onKey(key.mode, key.key_id, {
    type: 'RecordActivationOpened',
    checkout_session_id: session.id,
    checkout_url: session.checkout_url,
    expires_at: expiresAt,
    now: new Date().toISOString(),
  });
  return { id: key.key_id, active: false, activation_checkout_url: session.checkout_url, activation_expires_at: expiresAt };
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
    @Inject(ACTIVATION_CHECKOUT) private readonly checkout: ActivationCheckout,
  ) {}

  async execute({ keyId }: OpenKeyActivationCommand): Promise<KeyActivation> {
    const { mode, state } = await this.accounts.loadKey(keyId);
    // Before the checkout opens: a revoked or active key gets none.
    assertActivationOpenable(keyId, state);
    return openKeyActivation(this.checkout, this.accounts, { key_id: state.created.key_id, account_id: state.created.account_id, mode });
  }
}
