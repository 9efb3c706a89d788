import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, Database, Queryable } from '../database/database';
import type { Mode } from '../platform/mode';
import { filteredBy, inMode, Owner, ownedBy } from '../platform/owner-scope';
import { CreatedBound, createdSql } from '../platform/created-range';
import { ApiError, Errors } from '../platform/errors';
import { invalidCursor, Page, toPage } from '../platform/pagination';
import type { Payout } from './events';
import { BalanceTransaction, DEFAULT_CURRENCY, emptySummary, LedgerSummary, OPERATOR_PAUSE_REASON, sourceOf, TransactionType } from './ledger.decider';

/** The name of this context's read model (its projection in projections/, its checkpoint). */
export const BALANCE_TRANSACTIONS_READ_MODEL = 'balance_transactions';
/** Why a ledger's payouts are paused (projections/payout-pauses.projection.ts). */
export const PAYOUT_PAUSES_READ_MODEL = 'payout_pauses';

/** Why payouts are paused, as GET /v1/payouts and GET /v1/balance show it (decisions "Paused payouts"); null while they run. */
export interface PayoutsPauseView {
  /** `destination_refused: <processor code>` (a new destination lifts it) or `paused_by_operator`. */
  reason: string;
  since: string;
  /** The processor's code when its refusal paused them, else null. */
  failure_code: string | null;
}

export interface LedgerAccountView {
  account_id: string;
  mode: Mode;
  summary: LedgerSummary;
  payouts_paused: boolean;
  /** Why they are paused; read by account() only (null elsewhere). */
  payouts_pause: PayoutsPauseView | null;
}

const iso = (value: Date | string) => new Date(value).toISOString();

/** Stripe's reporting categories of a balance transaction. */
const REPORTING_CATEGORY = { sale: 'charge', refund: 'refund', payout: 'payout', dispute: 'dispute', dispute_reversal: 'dispute_reversal', adjustment: 'adjustment' } as const;

/** An item of GET /v1/balance_transactions: the spec's fields, its reporting category and the balance after it. */
export type BalanceTransactionItem = BalanceTransaction & {
  reporting_category: (typeof REPORTING_CATEGORY)[TransactionType];
  balance_after_cents: number;
};

export function toBalanceTransactionView(row: any): BalanceTransaction {
  return {
    id: row.id,
    object: 'balance_transaction',
    type: row.type,
    amount_cents: Number(row.amount_cents),
    fee_cents: Number(row.fee_cents),
    net_cents: Number(row.net_cents),
    currency: row.currency,
    status: row.status,
    created_at: iso(row.created_at),
    source: sourceOf({
      purchase_id: row.purchase_id ?? null,
      asset: row.asset_slug === null || row.asset_slug === undefined ? null : { slug: row.asset_slug, title: row.asset_title },
      payout_id: row.payout_id ?? null,
    }),
    description: row.description,
  };
}

function toPayout(row: any): Payout {
  return {
    id: row.id,
    object: 'payout',
    amount_cents: Number(row.amount_cents),
    currency: row.currency,
    status: row.status,
    created_at: iso(row.created_at),
    arrival_date: row.arrival_date ? iso(row.arrival_date) : null,
    failure_code: row.failure_code,
    failure_message: row.failure_message,
  };
}

function toLedgerAccount(row: any): LedgerAccountView {
  return {
    account_id: row.account_id,
    mode: row.mode,
    summary: {
      currency: row.currency ?? DEFAULT_CURRENCY,
      gross_cents: Number(row.gross_cents),
      platform_fee_cents: Number(row.platform_fee_cents),
      earned_cents: Number(row.earned_cents),
      refunded_cents: Number(row.refunded_cents),
      paid_out_cents: Number(row.paid_out_cents),
      balance_cents: Number(row.balance_cents),
      sale_count: Number(row.sale_count),
      refund_count: Number(row.refund_count),
    },
    payouts_paused: row.payouts_paused,
    payouts_pause: null,
  };
}

/**
 * A ledger the read model has no row for, as the API shows it: zeros, usd, payouts
 * running. Events that change no line or summary (a payout destination) make no row.
 */
export function emptyLedger(accountId: string, mode: Mode): LedgerAccountView {
  return toLedgerAccount({ currency: null, ...emptySummary(), payouts_paused: false, account_id: accountId, mode });
}

/** Reads of the balance_transactions and ledger_accounts read models; every read takes the mode. */
@Injectable()
export class LedgerQueries {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /**
   * Runs several reads on one repeatable-read snapshot, so a page and its summary agree
   * even while sales are being recorded. Inside fn, read only through `q`.
   */
  snapshot<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    return this.db.transaction(async (tx) => {
      await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
      return fn(tx);
    });
  }

  /** The summary of an account's whole ledger in one mode; zeros before its first event. */
  async account(owner: Owner, q: Queryable = this.db): Promise<LedgerAccountView> {
    const s = ownedBy(owner);
    const { rows } = await q.query(`SELECT * FROM ledger_accounts WHERE ${s.where()}`, s.params);
    const view = rows[0] ? toLedgerAccount(rows[0]) : emptyLedger(owner.accountId, owner.mode);
    return { ...view, payouts_pause: await this.pause(owner, q) };
  }

  /** Why the account's payouts are paused in the mode, null while they run. */
  async pause(owner: Owner, q: Queryable = this.db): Promise<PayoutsPauseView | null> {
    const s = ownedBy(owner);
    const { rows } = await q.query(`SELECT reason, since, failure_code FROM payout_pauses WHERE ${s.where()}`, s.params);
    return rows[0] ? { reason: rows[0].reason, since: iso(rows[0].since), failure_code: rows[0].failure_code ?? null } : null;
  }

  /**
   * Newest first; the cursor is the id of the last item of the previous page. Each item also
   * gets its reporting_category and the ledger's balance after it. `payoutId`: the sales and
   * refunds that payout paid out (since the payout before it that was not refused, up to its
   * initiation); 404 for a payout not on this ledger.
   */
  async transactions(
    owner: Owner,
    options: { type?: TransactionType; limit: number; cursor?: string; created?: readonly CreatedBound[]; payoutId?: string },
    /** The ledger's whole balance (its summary's), read in the same snapshot: the balances after each line count back from it. */
    balanceCents: number,
    q: Queryable = this.db,
  ): Promise<Page<BalanceTransactionItem>> {
    const s = ownedBy(owner);
    const where = [s.where()];
    if (options.type) where.push(`type = ${s.param(options.type)}`);
    if (options.cursor) where.push(`seq < ${s.param(await this.seqOf(q, owner, options.cursor))}`);
    where.push(...createdSql(options.created ?? [], 'created_at', (v) => s.param(v)));
    if (options.payoutId) {
      const { from, to } = await this.paidOutBy(q, owner, options.payoutId);
      where.push(`type <> 'payout'`, `seq > ${s.param(from)}`, `seq < ${s.param(to)}`);
    }
    const { rows } = await q.query<{ id: string; seq: number }>(
      `SELECT * FROM balance_transactions WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT ${s.param(options.limit + 1)}`,
      s.params,
    );
    const page = toPage(rows, options.limit, (row) => ({ seq: Number(row.seq), item: toBalanceTransactionView(row) }));
    const after = await this.balancesAfter(q, owner, page.items.map((i) => i.seq), balanceCents);
    return { ...page, items: page.items.map(({ seq, item }) => ({ ...item, reporting_category: REPORTING_CATEGORY[item.type], balance_after_cents: after.get(seq)! })) };
  }

  /**
   * The ledger's balance after each of the given entries, in line order: its whole balance
   * less the entries after it, read back from the newest to the oldest asked for.
   */
  private async balancesAfter(q: Queryable, owner: Owner, seqs: number[], balanceCents: number): Promise<Map<number, number>> {
    const balances = new Map<number, number>();
    if (!seqs.length) return balances;
    const s = ownedBy(owner);
    const { rows } = await q.query<{ seq: number; net_cents: string }>(
      `SELECT seq, net_cents FROM balance_transactions WHERE ${s.where()} AND seq >= ${s.param(Math.min(...seqs))} ORDER BY seq DESC`,
      s.params,
    );
    let balance = balanceCents;
    for (const row of rows) {
      balances.set(Number(row.seq), balance);
      balance -= Number(row.net_cents);
    }
    return balances;
  }

  /**
   * The lines (sales, refunds, disputes, adjustments) a payout paid out, oldest first: the
   * report's payout reconciliation. A failed payout paid none; [] for a payout not on this ledger.
   */
  async paidBy(owner: Owner, payoutId: string, q: Queryable = this.db): Promise<BalanceTransaction[]> {
    const range = await this.paidOutBy(q, owner, payoutId).catch((error) => {
      // The payout is not (yet) in the creator ledger's read model: it shows no lines, and the report says they do not match.
      if (error instanceof ApiError && error.status === 404) return { from: 0, to: 0 };
      throw error;
    });
    const s = ownedBy(owner);
    const { rows } = await q.query(
      `SELECT * FROM balance_transactions WHERE ${s.where()} AND type <> 'payout' AND seq > ${s.param(range.from)} AND seq < ${s.param(range.to)} ORDER BY seq`,
      s.params,
    );
    return rows.map(toBalanceTransactionView);
  }

  /** The seq range of the sales and refunds a payout paid out: after the last payout before it that was not refused, before its own. */
  private async paidOutBy(q: Queryable, owner: Owner, payoutId: string): Promise<{ from: number; to: number }> {
    const s = ownedBy(owner);
    const { rows } = await q.query<{ seq: number; status: string; previous: number | null }>(
      `SELECT p.seq, p.status,
              (SELECT max(b.seq) FROM payouts b WHERE b.account_id = p.account_id AND b.mode = p.mode AND b.seq < p.seq AND b.status <> 'failed') AS previous
         FROM payouts p WHERE ${s.where('p')} AND p.id = ${s.param(payoutId)}`,
      s.params,
    );
    if (!rows.length) throw Errors.notFound('payout');
    // A refused payout paid nothing out.
    if (rows[0].status === 'failed') return { from: 0, to: 0 };
    return { from: rows[0].previous ?? -1, to: rows[0].seq };
  }

  /** The account a payout of this mode paid, for an operator who has only its id. */
  async payoutAccount(mode: Mode, payoutId: string): Promise<string | undefined> {
    const s = inMode(mode);
    const { rows } = await this.db.query<{ account_id: string }>(`SELECT account_id FROM payouts WHERE ${s.where()} AND id = ${s.param(payoutId)}`, s.params);
    return rows[0]?.account_id;
  }

  /** Payouts newest first, in transit, paid or failed; the cursor is a payout id. */
  async payouts(owner: Owner, options: { limit: number; cursor?: string; created?: readonly CreatedBound[] }, q: Queryable = this.db): Promise<Page<Payout>> {
    const s = ownedBy(owner);
    let after = createdSql(options.created ?? [], 'created_at', (v) => s.param(v)).map((c) => `AND ${c} `).join('');
    if (options.cursor) {
      const c = ownedBy(owner);
      const { rows } = await q.query<{ seq: number }>(`SELECT seq FROM payouts WHERE ${c.where()} AND id = ${c.param(options.cursor)}`, c.params);
      if (!rows.length) throw invalidCursor();
      after += `AND seq < ${s.param(rows[0].seq)}`;
    }
    const { rows } = await q.query(
      `SELECT * FROM payouts WHERE ${s.where()} ${after} ORDER BY seq DESC LIMIT ${s.param(options.limit + 1)}`,
      s.params,
    );
    return toPage(rows, options.limit, toPayout);
  }

  /** Every balance transaction of one ledger, oldest first, as the list shows them (export). */
  async all(owner: Owner, q: Queryable = this.db): Promise<BalanceTransactionItem[]> {
    const s = ownedBy(owner);
    const { rows } = await q.query(`SELECT * FROM balance_transactions WHERE ${s.where()} ORDER BY seq`, s.params);
    let balance = 0;
    return rows.map((row) => {
      const item = toBalanceTransactionView(row);
      balance += item.net_cents;
      return { ...item, reporting_category: REPORTING_CATEGORY[item.type], balance_after_cents: balance };
    });
  }

  /** Every balance transaction of every ledger, optionally of one account and/or mode, by "account:mode", oldest first (verify). */
  async transactionsByLedger(filter: { accountId?: string; mode?: Mode }, q: Queryable = this.db): Promise<Map<string, BalanceTransaction[]>> {
    const s = filteredBy(filter);
    const { rows } = await q.query(`SELECT * FROM balance_transactions WHERE ${s.where()} ORDER BY account_id, mode, seq`, s.params);
    const ledgers = new Map<string, BalanceTransaction[]>();
    for (const row of rows) {
      const key = `${row.account_id}:${row.mode}`;
      if (!ledgers.has(key)) ledgers.set(key, []);
      ledgers.get(key)!.push(toBalanceTransactionView(row));
    }
    return ledgers;
  }

  /** Every ledger, optionally of one account and/or mode. */
  async ledgers(filter: { accountId?: string; mode?: Mode }, q: Queryable = this.db): Promise<LedgerAccountView[]> {
    const s = filteredBy(filter);
    const { rows } = await q.query(`SELECT * FROM ledger_accounts WHERE ${s.where()} ORDER BY account_id, mode`, s.params);
    return rows.map(toLedgerAccount);
  }

  /**
   * Accounts whose read model shows a positive balance, paused ones included: a run reports
   * those skipped, with why (their ledger stream decides; the row only picks them).
   */
  async payableAccounts(mode: Mode): Promise<{ accountId: string; pause: { reason: string; since: string; refused: boolean } | null }[]> {
    const s = inMode(mode);
    const { rows } = await this.db.query<{ account_id: string; payouts_paused: boolean; reason: string | null; since: string | null; failure_code: string | null }>(
      `SELECT a.account_id, a.payouts_paused, p.reason, p.since, p.failure_code
         FROM ledger_accounts a LEFT JOIN payout_pauses p ON p.account_id = a.account_id AND p.mode = a.mode
        WHERE ${s.where('a')} AND a.balance_cents > 0 ORDER BY a.account_id`,
      s.params,
    );
    return rows.map((r) => ({
      accountId: r.account_id,
      pause: r.payouts_paused ? { reason: r.reason ?? OPERATOR_PAUSE_REASON, since: r.since ? iso(r.since) : '', refused: r.failure_code !== null } : null,
    }));
  }

  private async seqOf(q: Queryable, owner: Owner, transactionId: string): Promise<number> {
    const s = ownedBy(owner);
    const { rows } = await q.query<{ seq: number }>(`SELECT seq FROM balance_transactions WHERE ${s.where()} AND id = ${s.param(transactionId)}`, s.params);
    if (!rows.length) throw invalidCursor();
    return rows[0].seq;
  }
}
