import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { AccountStreams } from '../../accounts/account-streams';
import { SETTINGS, Settings } from '../../config/settings';
import { newId } from '../../platform/ids';
import type { Mode } from '../../platform/mode';
import type { AssetRef } from '../events';
import { BalanceTransaction, statusOf, toBalanceTransaction } from '../ledger.decider';
import { LedgerStreams } from '../ledger-streams';

export interface SaleInput {
  purchase_id: string;
  asset: AssetRef;
  amount_cents: number;
  currency: string;
  /** The processor's payment, for reconciliation. */
  payment_reference?: string;
}

/**
 * The one entry point for sale money: fulfilment calls it once a payment is confirmed.
 * Idempotent per purchase id: a repeat records nothing and returns the first sale.
 */
export class RecordSaleCommand extends Command<BalanceTransaction> {
  constructor(readonly sellerAccountId: string, readonly mode: Mode, readonly sale: SaleInput) {
    super();
  }
}

@CommandHandler(RecordSaleCommand)
export class RecordSaleHandler implements ICommandHandler<RecordSaleCommand> {
  constructor(
    private readonly ledgers: LedgerStreams,
    private readonly accounts: AccountStreams,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  async execute({ sellerAccountId, mode, sale }: RecordSaleCommand): Promise<BalanceTransaction> {
    // By id only: a slug here would open a second ledger under another stream name.
    await this.accounts.getById(sellerAccountId);
    return this.ledgers.handle(
      {
        type: 'RecordSale',
        account_id: sellerAccountId,
        mode,
        now: new Date().toISOString(),
        transaction_id: newId('txn'),
        purchase_id: sale.purchase_id,
        asset: sale.asset,
        amount_cents: sale.amount_cents,
        currency: sale.currency,
        fee_bps: this.settings.platformFeeBps,
        payment_reference: sale.payment_reference,
      },
      (state) => {
        const index = state.sales.get(sale.purchase_id)!.index;
        return toBalanceTransaction(state.entries[index], statusOf(state, index));
      },
    );
  }
}
