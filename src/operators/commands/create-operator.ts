import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { OperatorRole } from '../../platform/auth/operator';
import { ApiError } from '../../platform/errors';
import { BOOTSTRAP_OPERATOR } from '../../platform/request-context';
import { OperatorStreams } from '../operator-streams';
import { generateOperatorToken } from '../operator-token';

export interface CreatedOperator {
  name: string;
  role: OperatorRole;
  /** The token, shown only in this answer. */
  token: string;
  created_at: string;
}

export class CreateOperatorCommand extends Command<CreatedOperator> {
  constructor(
    readonly name: string,
    readonly role: OperatorRole,
  ) {
    super();
  }
}

@CommandHandler(CreateOperatorCommand)
export class CreateOperatorHandler implements ICommandHandler<CreateOperatorCommand> {
  constructor(private readonly operators: OperatorStreams) {}

  async execute(command: CreateOperatorCommand): Promise<CreatedOperator> {
    if (command.name === BOOTSTRAP_OPERATOR) {
      throw new ApiError(409, 'operator_exists', `"${BOOTSTRAP_OPERATOR}" is the operator of the bootstrap ADMIN_TOKEN; choose another name.`);
    }
    const { token, tokenHash } = generateOperatorToken();
    const { state } = await this.operators.on(command.name, { type: 'CreateOperator', name: command.name, role: command.role, token_hash: tokenHash, now: new Date().toISOString() });
    return { name: command.name, role: command.role, token, created_at: state.current!.created_at };
  }
}
