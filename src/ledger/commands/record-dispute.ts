import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { newId } from '../../platform/ids';
import type { Mode } from '../../platform/mode';
import { LedgerStreams } from '../ledger-streams';

/**
 * A dispute of a sale's payment: withholds the sale's net of the disputed amount from the
 * creator's balance. Recorded once per dispute id (a replay after a crash records nothing).
 */
export class RecordDisputeCommand extends Command<void> {
  constructor(
    readonly sellerAccountId: string,
    readonly mode: Mode,
    readonly purchaseId: string,
    readonly disputeId: string,
    readonly amountCents: number,
    readonly disputeFeeCents: number,
    readonly reason: string,
  ) {
    super();
  }
}

@CommandHandler(RecordDisputeCommand)
export class RecordDisputeHandler implements ICommandHandler<RecordDisputeCommand> {
  constructor(private readonly ledgers: LedgerStreams) {}

  async execute(c: RecordDisputeCommand): Promise<void> {
    await this.ledgers.handle(
      {
        type: 'OpenDispute',
        account_id: c.sellerAccountId,
        mode: c.mode,
        now: new Date().toISOString(),
        transaction_id: newId('txn'),
        purchase_id: c.purchaseId,
        dispute_id: c.disputeId,
        amount_cents: c.amountCents,
        dispute_fee_cents: c.disputeFeeCents,
        reason: c.reason,
      },
      () => undefined,
    );
  }
}

/** How a sale's dispute closed: won releases what it withheld, lost keeps it. Once per dispute. */
export class RecordDisputeOutcomeCommand extends Command<void> {
  constructor(
    readonly sellerAccountId: string,
    readonly mode: Mode,
    readonly purchaseId: string,
    readonly disputeId: string,
    readonly outcome: 'won' | 'lost',
  ) {
    super();
  }
}

@CommandHandler(RecordDisputeOutcomeCommand)
export class RecordDisputeOutcomeHandler implements ICommandHandler<RecordDisputeOutcomeCommand> {
  constructor(private readonly ledgers: LedgerStreams) {}

  async execute(c: RecordDisputeOutcomeCommand): Promise<void> {
    await this.ledgers.handle(
      {
        type: 'CloseDispute',
        account_id: c.sellerAccountId,
        mode: c.mode,
        now: new Date().toISOString(),
        transaction_id: newId('txn'),
        purchase_id: c.purchaseId,
        dispute_id: c.disputeId,
        outcome: c.outcome,
      },
      () => undefined,
    );
  }
}
