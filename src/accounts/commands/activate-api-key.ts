import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { Mode } from '../../platform/mode';
import { AccountStreams } from '../account-streams';

/** Activates a key whose activation fee was paid. Idempotent: an active key records nothing. */
export class ActivateApiKeyCommand extends Command<void> {
  constructor(readonly mode: Mode, readonly keyId: string, readonly checkoutSessionId: string) {
    super();
  }
}

@CommandHandler(ActivateApiKeyCommand)
export class ActivateApiKeyHandler implements ICommandHandler<ActivateApiKeyCommand> {
  constructor(private readonly accounts: AccountStreams) {}

  async execute({ mode, keyId, checkoutSessionId }: ActivateApiKeyCommand): Promise<void> {
    await this.accounts.onKey(mode, keyId, { type: 'ActivateApiKey', checkout_session_id: checkoutSessionId, now: new Date().toISOString() });
  }
}
