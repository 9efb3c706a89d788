import { Controller, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { AdminGuard } from '../admin/admin.guard';
import { WithoutApiKey } from '../platform/auth/auth-context';
import { RefundPurchaseCommand } from './commands/refund-purchase';

/** Operator API of commerce (`svc purchases refund`), behind ADMIN_TOKEN. */
@Controller('admin/purchases')
@WithoutApiKey()
@UseGuards(AdminGuard)
export class CommerceAdminController {
  constructor(private readonly commands: CommandBus) {}

  @Post(':id/refund')
  @HttpCode(200)
  refund(@Param('id') id: string) {
    return this.commands.execute(new RefundPurchaseCommand(id));
  }
}
