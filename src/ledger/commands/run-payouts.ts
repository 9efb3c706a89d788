import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { AccountStreams } from '../../accounts/account-streams';
import { PAYMENT_PROCESSOR, PaymentProcessor, TransferRefusedError } from '../../payments/payment-processor';
import { ApiError } from '../../platform/errors';
import { newId } from '../../platform/ids';
import type { Mode } from '../../platform/mode';
import type { Payout } from '../events';
import { LedgerErrors } from '../ledger.errors';
import { LedgerQueries } from '../ledger-queries';
import { LedgerStreams } from '../ledger-streams';

/**
 * Pays each account's whole positive balance (one account, or every account of the mode).
 * In a run over the mode, a paused account with a balance is reported skipped with why
 * (payouts_paused, and the pause's reason: a refused destination pauses its creator, so a
 * later run sends no transfer there and records no new failed payout); asked for one such
 * account, it answers why (400 payouts_paused or nothing_to_pay).
 *
 * A payout has two steps on the ledger stream: PayoutInitiated (decided against the
 * balance, so two runs cannot both pay it), then the processor's transfer, then PayoutPaid.
 * A run that finds a payout still in flight (a crash, a lost connection) sends the same
 * transfer again under the same payout id, which the processor pays once.
 */
/** What a run did for one account: paid, failed (the processor refused or did not answer), or skipped and why. */
export interface PayoutRunResult {
  account_id: string;
  status: 'paid' | 'failed' | 'skipped';
  payout_id: string | null;
  amount_cents: number | null;
  /** failed: the processor's code (Stripe's, e.g. resource_missing) or ours; skipped: why. */
  failure_code: string | null;
  reason: string | null;
}

export class RunPayoutsCommand extends Command<{ items: Payout[]; results: PayoutRunResult[] }> {
  constructor(readonly mode: Mode, readonly account?: string) {
    super();
  }
}

@CommandHandler(RunPayoutsCommand)
export class RunPayoutsHandler implements ICommandHandler<RunPayoutsCommand> {
  constructor(
    private readonly ledgers: LedgerStreams,
    private readonly accounts: AccountStreams,
    private readonly queries: LedgerQueries,
    @Inject(PAYMENT_PROCESSOR) private readonly processor: PaymentProcessor,
  ) {}

  async execute({ mode, account }: RunPayoutsCommand): Promise<{ items: Payout[]; results: PayoutRunResult[] }> {
    let accountIds: string[];
    const items: Payout[] = [];
    const results: PayoutRunResult[] = [];
    if (account !== undefined) {
      accountIds = [(await this.accounts.get(account)).id];
    } else {
      // Which accounts to consider is a query over many streams, so a read model may pick
      // them; each payout is still decided on that account's ledger stream, not on the row.
      // One the read model shows paused is reported skipped from it, without a stream read
      // (paused creators with a balance can pile up; a run must stay as cheap as before).
      const payable = await this.queries.payableAccounts(mode);
      for (const { accountId, pause } of payable) {
        if (pause) results.push(skipped(accountId, 'payouts_paused', LedgerErrors.payoutsPaused(accountId, pause).message));
      }
      accountIds = payable.filter((a) => !a.pause).map((a) => a.accountId);
    }
    for (const accountId of accountIds) {
      // Named, its refusal is the answer. Over the mode, one account's refusal (or a processor
      // that did not answer for it) must not stop the creators after it (issue 38, defect 1):
      // it is reported, and the run goes on.
      if (account !== undefined) {
        const payout = await this.payOut(accountId, mode, true);
        if (payout) items.push(payout);
        results.push(payout ? paidResult(accountId, payout) : skipped(accountId, 'nothing_to_pay', 'nothing was paid'));
        continue;
      }
      try {
        const payout = await this.payOut(accountId, mode, true);
        if (payout) items.push(payout);
        results.push(payout ? paidResult(accountId, payout) : skipped(accountId, 'nothing_to_pay', 'nothing was paid'));
      } catch (error) {
        const failed = error instanceof TransferRefusedError;
        const code = failed ? error.failureCode : error instanceof ApiError ? error.code : 'internal_error';
        const message = error instanceof Error ? error.message : String(error);
        // A refusal of ours (paused, no destination, nothing to pay) is a skip; the processor's refusal or silence a failure.
        const ours = error instanceof ApiError && !failed && error.status < 500;
        results.push({ account_id: accountId, status: ours ? 'skipped' : 'failed', payout_id: null, amount_cents: null, failure_code: code, reason: message });
      }
    }
    return { items, results };
  }

  private async payOut(accountId: string, mode: Mode, named: boolean): Promise<Payout | undefined> {
    const who = { account_id: accountId, mode };
    const now = () => new Date().toISOString();
    const { inFlight: payout, paused, pause, balance, destination } = await this.ledgers.handle(
      {
        type: 'RunPayout',
        ...who,
        now: now(),
        transaction_id: newId('txn'),
        payout_id: newId('po'),
        requires_destination: this.processor.requiresPayoutDestination,
      },
      (state) => ({ inFlight: state.inFlight, paused: state.paused, pause: state.pause, balance: state.summary.balance_cents, destination: state.destination }),
    );
    if (!payout) {
      if (!named) return undefined;
      if (paused) throw LedgerErrors.payoutsPaused(accountId, pause);
      if (balance > 0) throw LedgerErrors.destinationMissing(accountId, mode);
      throw LedgerErrors.nothingToPay(accountId, balance);
    }
    let transferId: string;
    try {
      ({ transferId } = await this.processor.transfer({
        mode,
        payoutId: payout.payout_id,
        amountCents: payout.amount_cents,
        currency: payout.currency,
        destination,
      }));
    } catch (error) {
      // Refused: nothing moved, so the payout ends and the balance stays for the next run.
      if (error instanceof TransferRefusedError) {
        const failure = { failure_code: error.failureCode, reason: error.message };
        await this.ledgers.handle({ type: 'FailPayout', ...who, now: now(), payout_id: payout.payout_id, ...failure }, () => undefined);
      }
      throw error;
    }
    return this.ledgers.handle({ type: 'SettlePayout', ...who, now: now(), payout_id: payout.payout_id, transfer_id: transferId }, (_, recorded) => {
      const paid = recorded.find((e) => e.type === 'PayoutPaid');
      return paid?.type === 'PayoutPaid' ? paid.data.payout : undefined;
    });
  }
}

const paidResult = (accountId: string, payout: Payout): PayoutRunResult => ({
  account_id: accountId,
  status: 'paid',
  payout_id: payout.id,
  amount_cents: payout.amount_cents,
  failure_code: null,
  reason: null,
});

const skipped = (accountId: string, code: string, reason: string): PayoutRunResult => ({
  account_id: accountId,
  status: 'skipped',
  payout_id: null,
  amount_cents: null,
  failure_code: code,
  reason,
});
