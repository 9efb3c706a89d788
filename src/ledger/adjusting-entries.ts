/**
 * Adjusting entries (issue 38, section 3: `svc ledger adjust`): the one way to book by hand. A
 * balanced entry of one debit and one credit between two platform accounts (ManualEntryRecorded
 * on its own stream) or between a platform account and one creator's payable
 * (AdjustmentRecorded on the creator's ledger stream, through the ledger decider, so the
 * creator's balance, payouts and balance transactions see it as an `adjustment` line).
 */
import { Injectable } from '@nestjs/common';
import { AccountQueries } from '../accounts/account-queries';
import { Errors } from '../platform/errors';
import { newId } from '../platform/ids';
import type { Mode } from '../platform/mode';
import { Streams } from '../platform/streams';
import { EventWriter } from '../projection-runner/event-writer';
import type { ManualEntryRecorded } from './events';
import { Accounts } from './journal';
import { DEFAULT_CURRENCY, statusOf, toBalanceTransaction } from './ledger.decider';
import { LedgerStreams } from './ledger-streams';

/** The platform's accounts an adjusting entry may touch: not processor:clearing, which only the processor's movements change (reconcile). */
export const ADJUSTABLE_PLATFORM_ACCOUNTS: readonly string[] = [
  Accounts.feeRevenue,
  Accounts.activationRevenue,
  Accounts.processorFees,
  Accounts.disputes,
  Accounts.suspense,
  Accounts.adjustments,
];

const CREATOR_PAYABLE = /^creator:(.{1,100}):payable$/;
export const MAX_ADJUSTMENT_CENTS = 100_000_000_000;

export interface AdjustmentInput {
  mode: Mode;
  debit_account: unknown;
  credit_account: unknown;
  amount_cents: unknown;
  reason: unknown;
  actor: string | null;
}

/** An adjusting entry as `svc ledger adjust` prints it. */
export interface ManualEntry {
  object: 'manual_entry';
  id: string;
  mode: Mode;
  debit_account: string;
  credit_account: string;
  amount_cents: number;
  currency: string;
  reason: string;
  actor: string | null;
  created_at: string;
  /** The creator's balance transaction, for an entry on a creator's payable. */
  balance_transaction: ReturnType<typeof toBalanceTransaction> | null;
}

@Injectable()
export class AdjustingEntries {
  constructor(
    private readonly writer: EventWriter,
    private readonly ledgers: LedgerStreams,
    private readonly accounts: AccountQueries,
  ) {}

  /** Checks every field before anything is read or appended: a refused entry appends nothing. */
  async adjust(input: AdjustmentInput, now = new Date()): Promise<ManualEntry> {
    const debit = await this.account('debit_account', input.debit_account);
    const credit = await this.account('credit_account', input.credit_account);
    if (debit.name === credit.name) throw Errors.validationFailed('Invalid field "credit_account": must differ from "debit_account".');
    if (debit.creator && credit.creator) throw Errors.validationFailed('Invalid field "credit_account": an adjusting entry touches at most one creator\'s payable; the other side is a platform account.');
    const amount = input.amount_cents;
    if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount < 1 || amount > MAX_ADJUSTMENT_CENTS) {
      throw Errors.validationFailed(`Invalid field "amount_cents": must be a whole number of cents between 1 and ${MAX_ADJUSTMENT_CENTS}.`);
    }
    const reason = typeof input.reason === 'string' ? input.reason.trim() : '';
    if (!reason || reason.length > 500) throw Errors.validationFailed('Invalid field "reason": required, 1-500 characters: why the entry is booked (an auditor reads it).');

    const creator = debit.creator ?? credit.creator;
    if (creator) {
      const id = newId('txn');
      return this.ledgers.handle(
        {
          type: 'RecordAdjustment',
          account_id: creator,
          mode: input.mode,
          now: now.toISOString(),
          transaction_id: id,
          side: debit.creator ? 'debit' : 'credit',
          counter_account: debit.creator ? credit.name : debit.name,
          amount_cents: amount,
          reason,
          actor: input.actor,
        },
        (state, recorded) => {
          const event = recorded[0];
          if (event?.type !== 'AdjustmentRecorded') throw new Error('the ledger recorded no adjustment');
          const index = state.entries.findIndex((e) => e.id === id);
          const e = event.data;
          return { object: 'manual_entry', id, mode: e.mode, debit_account: e.debit_account, credit_account: e.credit_account, amount_cents: e.amount_cents, currency: e.currency, reason: e.reason, actor: e.actor, created_at: e.created_at, balance_transaction: toBalanceTransaction(state.entries[index], statusOf(state, index)) };
        },
      );
    }
    const entry: ManualEntryRecorded = {
      entry_id: newId('adj'),
      mode: input.mode,
      debit_account: debit.name,
      credit_account: credit.name,
      amount_cents: amount,
      currency: DEFAULT_CURRENCY,
      reason,
      actor: input.actor,
      created_at: now.toISOString(),
    };
    await this.writer.append(Streams.manualEntry(input.mode, entry.entry_id), [{ type: 'ManualEntryRecorded', data: entry as unknown as Record<string, unknown> }], 'no_stream');
    const { entry_id, ...rest } = entry;
    return { object: 'manual_entry', id: entry_id, ...rest, balance_transaction: null };
  }

  /** A platform account an entry may touch, or `creator:<account id>:payable` of an existing account. */
  private async account(field: string, raw: unknown): Promise<{ name: string; creator?: string }> {
    const allowed = `one of ${ADJUSTABLE_PLATFORM_ACCOUNTS.join(', ')}, or creator:<account id>:payable`;
    if (typeof raw !== 'string' || !raw) throw Errors.validationFailed(`Invalid field "${field}": required: ${allowed}.`);
    if (ADJUSTABLE_PLATFORM_ACCOUNTS.includes(raw)) return { name: raw };
    const creator = CREATOR_PAYABLE.exec(raw)?.[1];
    if (!creator) throw Errors.validationFailed(`Invalid field "${field}": "${raw.slice(0, 120)}" is not an account an adjusting entry may touch: ${allowed}.`);
    const found = await this.accounts.findAccount(creator);
    if (!found || found.id !== creator) throw Errors.validationFailed(`Invalid field "${field}": no account "${creator.slice(0, 100)}"; name the creator by account id.`);
    return { name: raw, creator };
  }
}
