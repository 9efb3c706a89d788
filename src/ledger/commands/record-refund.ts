import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { newId } from '../../platform/ids';
import type { Mode } from '../../platform/mode';
import { BalanceTransaction, statusOf, toBalanceTransaction } from '../ledger.decider';
import { LedgerStreams } from '../ledger-streams';

/**
 * The one entry point for refund money: records the matching debit of the purchase's
 * sale. 404 sale_not_found for a purchase not on this ledger, 400 already_refunded twice.
 */
export class RecordRefundCommand extends Command<BalanceTransaction> {
  constructor(
    readonly sellerAccountId: string,
    readonly mode: Mode,
    readonly purchaseId: string,
    /** The processor's refund, for reconciliation; a partial one already recorded records nothing. */
    readonly processorRefundId?: string,
    /** A partial refund's amount; absent: what is left of the sale. */
    readonly amountCents?: number,
  ) {
    super();
  }
}

@CommandHandler(RecordRefundCommand)
export class RecordRefundHandler implements ICommandHandler<RecordRefundCommand> {
  constructor(private readonly ledgers: LedgerStreams) {}

  async execute({ sellerAccountId, mode, purchaseId, processorRefundId, amountCents }: RecordRefundCommand): Promise<BalanceTransaction> {
    return this.ledgers.handle(
      {
        type: 'RecordRefund',
        account_id: sellerAccountId,
        mode,
        now: new Date().toISOString(),
        transaction_id: newId('txn'),
        purchase_id: purchaseId,
        processor_refund_id: processorRefundId,
        amount_cents: amountCents,
      },
      (state, recorded) => {
        let index = state.entries.length - 1;
        // A repeated report records nothing: answer the purchase's latest refund.
        if (!recorded.length) while (index > 0 && !(state.entries[index].type === 'refund' && state.entries[index].purchase_id === purchaseId)) index--;
        return toBalanceTransaction(state.entries[index], statusOf(state, index));
      },
    );
  }
}
