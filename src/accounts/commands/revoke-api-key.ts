import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Streams } from '../../platform/streams';
import { EventWriter } from '../../projection-runner/event-writer';
import { AccountStreams } from '../account-streams';
import { AccountEvents, ApiKeyRevoked } from '../events';

export class RevokeApiKeyCommand extends Command<{ id: string; revoked: true }> {
  constructor(readonly keyId: string) {
    super();
  }
}

/** Revocation is final and idempotent; the guard reads the read model on every request, so it bites at once. */
@CommandHandler(RevokeApiKeyCommand)
export class RevokeApiKeyHandler implements ICommandHandler<RevokeApiKeyCommand> {
  constructor(
    private readonly accounts: AccountStreams,
    private readonly writer: EventWriter,
  ) {}

  async execute(command: RevokeApiKeyCommand): Promise<{ id: string; revoked: true }> {
    await this.writer.retryOnConflict(async () => {
      const key = await this.accounts.loadKey(command.keyId);
      if (key.revoked) return;
      const revoked: ApiKeyRevoked = {
        key_id: key.created.key_id,
        account_id: key.created.account_id,
        mode: key.mode,
        revoked_at: new Date().toISOString(),
      };
      await this.writer.append(Streams.apiKey(key.mode, command.keyId), [{ type: AccountEvents.ApiKeyRevoked, data: { ...revoked } }], key.revision);
    });
    return { id: command.keyId, revoked: true };
  }
}
