import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { AccountStreams } from '../account-streams';

export class RevokeApiKeyCommand extends Command<{ id: string; revoked: true }> {
  constructor(readonly keyId: string) {
    super();
  }
}

/** Revocation is final and idempotent; the guard reads the read model on every request, so it bites at once. */
@CommandHandler(RevokeApiKeyCommand)
export class RevokeApiKeyHandler implements ICommandHandler<RevokeApiKeyCommand> {
  constructor(private readonly accounts: AccountStreams) {}

  async execute(command: RevokeApiKeyCommand): Promise<{ id: string; revoked: true }> {
    // Which mode's stream holds the key (404 when neither does); the decider revokes it there.
    const { mode, loaded } = await this.accounts.loadKey(command.keyId);
    await this.accounts.onKey(mode, command.keyId, { type: 'RevokeApiKey', now: new Date().toISOString() }, loaded);
    return { id: command.keyId, revoked: true };
  }
}
