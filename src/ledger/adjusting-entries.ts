/**
 * Adjusting entries (issue 38, section 3: `svc ledger adjust`): the one way to book by hand. A
 * balanced entry of one debit and one credit between two platform accounts (ManualEntryRecorded
 * on its own stream) or between a platform account and one creator's payable
 * (AdjustmentRecorded on the creator's ledger stream, through the ledger decider, so the
 * creator's balance, payouts and balance transactions see it as an `adjustment` line).
 */
import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { AccountQueries } from '../accounts/account-queries';
import { EVENT_STORE, EventStore, WrongExpectedRevisionError } from '../event-store/event-store';
import { ApiError, Errors } from '../platform/errors';
import { newId } from '../platform/ids';
import type { Mode } from '../platform/mode';
import { Streams } from '../platform/streams';
import { EventWriter } from '../projection-runner/event-writer';
import type { AdjustmentRecorded, ManualEntryRecorded } from './events';
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
  /**
   * The request's Idempotency-Key, when it has one: the entry's id is derived from it, so a
   * retry whose first run booked the entry and died before its answer was kept (kill -9) finds
   * it and answers it instead of booking it again.
   */
  idempotency_key?: string;
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
    @Inject(EVENT_STORE) private readonly store: EventStore,
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
    const keyed = input.idempotency_key === undefined ? undefined : keyedId(input.mode, input.idempotency_key);
    const wanted = { debit_account: debit.name, credit_account: credit.name, amount_cents: amount, reason };
    if (creator) {
      const id = keyed ? `txn_${keyed}` : newId('txn');
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
          const index = state.entries.findIndex((e) => e.id === id);
          if (index < 0) throw new Error('the ledger recorded no adjustment');
          const line = toBalanceTransaction(state.entries[index], statusOf(state, index));
          const event = recorded[0];
          if (event === undefined) return { line, recorded: undefined };
          if (event.type !== 'AdjustmentRecorded') throw new Error('the ledger recorded no adjustment');
          return { line, recorded: event.data };
        },
      ).then(async ({ line, recorded }) => {
        // Booked by an earlier run under the same key: answered from its event, as first booked.
        const e = recorded ?? (await this.bookedAdjustment(input.mode, creator, id));
        if (!recorded) expectSameEntry(input.idempotency_key!, wanted, e);
        return { object: 'manual_entry', id, mode: e.mode, debit_account: e.debit_account, credit_account: e.credit_account, amount_cents: e.amount_cents, currency: e.currency, reason: e.reason, actor: e.actor, created_at: e.created_at, balance_transaction: line } as ManualEntry;
      });
    }
    const entry: ManualEntryRecorded = {
      entry_id: keyed ? `adj_${keyed}` : newId('adj'),
      mode: input.mode,
      debit_account: debit.name,
      credit_account: credit.name,
      amount_cents: amount,
      currency: DEFAULT_CURRENCY,
      reason,
      actor: input.actor,
      created_at: now.toISOString(),
    };
    const stream = Streams.manualEntry(input.mode, entry.entry_id);
    let booked = entry;
    try {
      await this.writer.append(stream, [{ type: 'ManualEntryRecorded', data: entry as unknown as Record<string, unknown> }], 'no_stream');
    } catch (error) {
      // The stream exists: only an id derived from the key can collide, so an earlier run under the same key booked it.
      if (!(error instanceof WrongExpectedRevisionError) || !keyed) throw error;
      const recorded = (await this.store.readStream(stream, { limit: 1 }))[0];
      if (recorded?.type !== 'ManualEntryRecorded') throw error;
      booked = recorded.data as unknown as ManualEntryRecorded;
      expectSameEntry(input.idempotency_key!, wanted, booked);
    }
    const { entry_id, ...rest } = booked;
    return { object: 'manual_entry', id: entry_id, ...rest, balance_transaction: null };
  }

  /** The creator-side adjustment `id` as its ledger stream recorded it. */
  private async bookedAdjustment(mode: Mode, creator: string, id: string): Promise<AdjustmentRecorded> {
    const events = await this.store.readStream(Streams.ledger(mode, creator));
    const found = events.find((e) => e.type === 'AdjustmentRecorded' && e.data.transaction_id === id);
    if (!found) throw new Error(`the ledger holds no adjustment ${id}`);
    return found.data as unknown as AdjustmentRecorded;
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

/** The id part of an entry booked under an Idempotency-Key: the same for every retry under that key in that mode. */
function keyedId(mode: Mode, key: string): string {
  return createHash('sha256').update(`adjust\n${mode}\n${key}`).digest('hex').slice(0, 24);
}

/**
 * A retry under a key whose entry is booked must ask for the same entry. The Idempotency-Key
 * layer checks this while it holds the first answer; once a killed request's lease has passed
 * only the booked entry can tell.
 */
function expectSameEntry(key: string, wanted: { debit_account: string; credit_account: string; amount_cents: number; reason: string }, booked: { debit_account: string; credit_account: string; amount_cents: number; reason: string }): void {
  const differs = (['debit_account', 'credit_account', 'amount_cents', 'reason'] as const).find((f) => wanted[f] !== booked[f]);
  if (differs) {
    throw new ApiError(400, 'idempotency_key_reused', `The Idempotency-Key "${key}" booked an adjusting entry with another ${differs}; this request's body differs. Use a new key for a different request.`, { differs: 'body' });
  }
}
