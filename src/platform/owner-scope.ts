import type { AuthContext } from './auth/auth-context';
import type { Mode } from './mode';

/** One account in one mode: whose read-model rows a query may see. An AuthContext is one. */
export type Owner = Pick<AuthContext, 'accountId' | 'mode'>;

/**
 * The tenant predicate of one read-model statement and its bind values: the only place that
 * writes `account_id = $n AND mode = $n` (docs/decisions.md, "Mode isolation in one place").
 * A query of an owner's rows takes an Owner, not an account id and a mode apart, so the mode
 * cannot be left out. The scope's own values are $1 (and $2), so `where()` may be written more
 * than once (a subquery, another alias); `param()` numbers every other value after them.
 * One scope per statement: its params are that statement's.
 */
export class Scope {
  readonly params: unknown[];

  private constructor(
    private readonly columns: readonly string[],
    values: unknown[],
  ) {
    this.params = values;
  }

  /** `account_id = $1 AND mode = $2`, of the owner's rows (an account column other than account_id may be named). */
  static ownedBy(owner: Owner, accountColumn = 'account_id'): Scope {
    return new Scope([accountColumn, 'mode'], [owner.accountId, owner.mode]);
  }

  /** `mode = $1`: every account's rows of one mode, for the platform's own views and the public catalog. */
  static inMode(mode: Mode): Scope {
    return new Scope(['mode'], [mode]);
  }

  /**
   * Every owner's rows, narrowed to an account and/or a mode when given: an operator's audit
   * or export across tenants (`svc ledger verify`), never a tenant's own read.
   */
  static filteredBy(filter: { accountId?: string; mode?: Mode }): Scope {
    const given = ([['account_id', filter.accountId], ['mode', filter.mode]] as const).filter(([, value]) => value != null);
    return new Scope(
      given.map(([column]) => column),
      given.map(([, value]) => value),
    );
  }

  /** The predicate, its columns qualified by `alias` when given; TRUE when a filter gave nothing. */
  where(alias?: string): string {
    const prefix = alias ? `${alias}.` : '';
    return this.columns.map((column, i) => `${prefix}${column} = $${i + 1}`).join(' AND ') || 'TRUE';
  }

  /** Binds a further value: its `$n`. */
  param(value: unknown): string {
    return `$${this.params.push(value)}`;
  }
}

export const ownedBy = Scope.ownedBy;
export const inMode = Scope.inMode;
export const filteredBy = Scope.filteredBy;
