import { Body, Controller, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { AdminGuard } from '../platform/auth/admin.guard';
import { WithoutApiKey } from '../platform/auth/auth-context';
import { CreateOperatorCommand } from './commands/create-operator';
import { RevokeOperatorCommand } from './commands/revoke-operator';
import { OperatorQueries } from './operator-queries';
import { CreateOperatorDto } from './operators.dto';

/** `svc operators ...`: named operators and their tokens (role admin only: roleForRoute lists no other for /admin/operators). */
@Controller('admin/operators')
@WithoutApiKey()
@UseGuards(AdminGuard)
export class OperatorsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly operators: OperatorQueries,
  ) {}

  /** A token for a person, shown once in this answer; role finance, operations or admin (default operations). */
  @Post()
  create(@Body() body: CreateOperatorDto) {
    return this.commands.execute(new CreateOperatorCommand(body.name, body.role ?? 'operations'));
  }

  /** Every named operator, revoked ones with revoked_at; no token or hash. */
  @Get()
  async list() {
    return { items: await this.operators.list() };
  }

  @Post(':name/revoke')
  @HttpCode(200)
  revoke(@Param('name') name: string) {
    return this.commands.execute(new RevokeOperatorCommand(name));
  }
}
