import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ApiError } from '../../platform/errors';
import { BOOTSTRAP_OPERATOR } from '../../platform/request-context';
import { OperatorStreams } from '../operator-streams';

export class RevokeOperatorCommand extends Command<{ name: string; revoked: true; revoked_at: string }> {
  constructor(readonly name: string) {
    super();
  }
}

/** Final for that token and idempotent; the token answers 401 from the moment this answers (the read model is waited for). */
@CommandHandler(RevokeOperatorCommand)
export class RevokeOperatorHandler implements ICommandHandler<RevokeOperatorCommand> {
  constructor(private readonly operators: OperatorStreams) {}

  async execute(command: RevokeOperatorCommand): Promise<{ name: string; revoked: true; revoked_at: string }> {
    if (command.name === BOOTSTRAP_OPERATOR) {
      throw new ApiError(400, 'bootstrap_operator', `"${BOOTSTRAP_OPERATOR}" is the bootstrap ADMIN_TOKEN: change ADMIN_TOKEN (or DATA_DIR/admin_token) and restart to retire it.`);
    }
    const { state } = await this.operators.on(command.name, { type: 'RevokeOperator', name: command.name, now: new Date().toISOString() });
    return { name: command.name, revoked: true, revoked_at: state.revokedAt! };
  }
}
