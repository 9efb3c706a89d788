import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module';
import { AdminGuard } from '../platform/auth/admin.guard';
import { BalanceController } from './balance.controller';
import { BooksAdminController } from './books-admin.controller';
import { Books } from './books';
import { AdjustingEntries } from './adjusting-entries';
import { PausePayoutsHandler, ResumePayoutsHandler } from './commands/pause-payouts';
import { RecordDisputeHandler, RecordDisputeOutcomeHandler } from './commands/record-dispute';
import { RecordRefundHandler } from './commands/record-refund';
import { RecordSaleHandler } from './commands/record-sale';
import { RunPayoutsHandler } from './commands/run-payouts';
import { SetPayoutDestinationHandler } from './commands/set-payout-destination';
import { JournalAudit } from './journal-audit';
import { JournalQueries } from './journal-queries';
import { LedgerAdminController } from './ledger-admin.controller';
import { LedgerAudit } from './ledger-audit';
import { LedgerQueries } from './ledger-queries';
import { LedgerReports } from './ledger-report';
import { LedgerStreams } from './ledger-streams';
import { LedgerReconciliation } from './reconciliation';

@Module({
  imports: [AccountsModule],
  controllers: [BalanceController, LedgerAdminController, BooksAdminController],
  providers: [
    AdminGuard,
    LedgerStreams,
    LedgerQueries,
    JournalQueries,
    JournalAudit,
    LedgerReconciliation,
    LedgerAudit,
    Books,
    AdjustingEntries,
    LedgerReports,
    RecordSaleHandler,
    RecordRefundHandler,
    RecordDisputeHandler,
    RecordDisputeOutcomeHandler,
    RunPayoutsHandler,
    PausePayoutsHandler,
    ResumePayoutsHandler,
    SetPayoutDestinationHandler,
  ],
  exports: [LedgerQueries, JournalQueries, LedgerReconciliation],
})
export class LedgerModule {}
