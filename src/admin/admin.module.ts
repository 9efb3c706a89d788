import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module';
import { AdminController } from './admin.controller';
import { AdminGuard } from '../platform/auth/admin.guard';

@Module({
  imports: [AccountsModule],
  controllers: [AdminController],
  providers: [AdminGuard],
})
export class AdminModule {}
