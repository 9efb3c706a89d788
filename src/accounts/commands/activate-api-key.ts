import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { Mode } from '../../platform/mode';
import { Streams } from '../../platform/streams';
import { EventWriter } from '../../projection-runner/event-writer';
import { AccountStreams } from '../account-streams';
import { AccountEvents, ApiKeyActivated } from '../events';

/** Activates a key whose activation fee was paid. Idempotent: an active key records nothing. */
export class ActivateApiKeyCommand extends Command<void> {
  constructor(readonly mode: Mode, readonly keyId: string, readonly checkoutSessionId: string) {
    super();
  }
}

@CommandHandler(ActivateApiKeyCommand)
export class ActivateApiKeyHandler implements ICommandHandler<ActivateApiKeyCommand> {
  constructor(
    private readonly accounts: AccountStreams,
    private readonly writer: EventWriter,
  ) {}

  async execute({ mode, keyId, checkoutSessionId }: ActivateApiKeyCommand): Promise<void> {
    await this.writer.retryOnConflict(async () => {
      const key = await this.accounts.loadKey(keyId, mode);
      if (key.active) return;
      const activated: ApiKeyActivated = {
        key_id: keyId,
        account_id: key.created.account_id,
        mode,
        checkout_session_id: checkoutSessionId,
        activated_at: new Date().toISOString(),
      };
      await this.writer.append(Streams.apiKey(mode, keyId), [{ type: AccountEvents.ApiKeyActivated, data: { ...activated } }], key.revision);
    });
  }
}
