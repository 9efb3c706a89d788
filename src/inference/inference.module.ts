import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module';
import { AdminGuard } from '../platform/auth/admin.guard';
import { ChatCompletions } from './chat-completions';
import { ChatController } from './chat.controller';
import { SetInferencePriceHandler } from './commands/set-price';
import { InferenceAdminController } from './inference-admin.controller';
import { InferencePrices } from './prices';
import { UsageAudit } from './usage-audit';
import { UsageController } from './usage.controller';
import { UsageMeter } from './usage-meter';
import { UsageQueries } from './usage-queries';

/** Paid, OpenAI-compatible chat inference: the gateway, its metering and usage (spec part 4). */
@Module({
  imports: [AccountsModule],
  controllers: [ChatController, UsageController, InferenceAdminController],
  providers: [AdminGuard, ChatCompletions, InferencePrices, UsageMeter, UsageQueries, UsageAudit, SetInferencePriceHandler],
  exports: [UsageQueries],
})
export class InferenceModule {}
