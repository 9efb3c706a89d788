import { Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { ActivationCheckout } from '../accounts/activation-checkout';
import type { Mode } from '../platform/mode';
import { OpenKeyActivationCheckoutCommand } from './commands/open-checkout';

/** Commerce's answer to accounts' ACTIVATION_CHECKOUT port: the key's activation checkout. */
@Injectable()
export class KeyActivationCheckout implements ActivationCheckout {
  constructor(private readonly commands: CommandBus) {}

  async open(key: { account_id: string; mode: Mode; key_id: string }) {
    const session = await this.commands.execute(new OpenKeyActivationCheckoutCommand(key.account_id, key.mode, key.key_id));
    return { id: session.id, checkout_url: session.checkout_url, expires_at: Number(session.expires_at) };
  }
}
