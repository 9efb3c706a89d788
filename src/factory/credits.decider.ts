/**
 * Generation credits as a pure decider on their stream credits-<mode>-<account> (the
 * consistency boundary: a balance is the `credits` of the stream's last event, whatever its
 * type). An operator grants them (`svc credits grant`); a spend and a refund are each one per
 * job and build, so a retry after a crash neither doubles nor loses one. No I/O, no clock.
 */
import type { CreditsGranted } from '../accounts/events';
import type { Decider } from '../event-store/stream-commands';
import { ApiError } from '../platform/errors';
import type { Mode } from '../platform/mode';
import type { CreditsRefunded, CreditsSpent } from './events';

export const insufficientCredits = () =>
  new ApiError(402, 'insufficient_credits', 'No generation credit left in this mode; an operator grants credits with `svc credits grant`.');

export type CreditsEvent =
  | { type: 'CreditsGranted'; data: CreditsGranted }
  | { type: 'CreditsSpent'; data: CreditsSpent }
  | { type: 'CreditsRefunded'; data: CreditsRefunded };

export interface CreditsState {
  /** The `credits` of the stream's last event: 0 before the first grant. */
  balance: number;
  /** By job: its spends, oldest first. */
  spends: Map<string, CreditsSpent[]>;
  /** The builds refunded, as "<job_id>#<build>". */
  refunded: Set<string>;
}

/** What a spend asks for: the creation's build 1 (with the prompt), or a rebuild from a job revision. */
export type SpendRequest = Pick<CreditsSpent, 'job_id' | 'build' | 'prompt' | 'job_revision'>;

export type CreditsCommand =
  | { type: 'Grant'; account_id: string; mode: Mode; amount: number; now: string }
  | { type: 'Spend'; account_id: string; mode: Mode; spend: SpendRequest; now: string }
  | { type: 'Refund'; account_id: string; mode: Mode; job_id: string; build: number; reason: string; now: string };

export function initialState(): CreditsState {
  return { balance: 0, spends: new Map(), refunded: new Set() };
}

/**
 * Extends the state it is given (a credits stream holds a spend per job and build: copying
 * the state on every event would make a load quadratic). StreamCommands keeps no folded
 * credits, so every load folds a fresh state of its own.
 */
export function evolve(state: CreditsState, event: CreditsEvent): CreditsState {
  switch (event.type) {
    case 'CreditsGranted':
      state.balance = event.data.credits;
      return state;
    case 'CreditsSpent': {
      const e = event.data;
      state.balance = e.credits;
      const spends = state.spends.get(e.job_id);
      if (spends) spends.push(e);
      else state.spends.set(e.job_id, [e]);
      return state;
    }
    case 'CreditsRefunded':
      state.balance = event.data.credits;
      state.refunded.add(buildKey(event.data.job_id, event.data.build));
      return state;
    default:
      return state;
  }
}

const buildKey = (jobId: string, build: number) => `${jobId}#${build}`;

/** The spend already recorded for this request (same job, build and job revision), if any. */
export function earlierSpend(state: CreditsState, spend: SpendRequest): CreditsSpent | undefined {
  return state.spends.get(spend.job_id)?.find((s) => s.build === spend.build && s.job_revision === spend.job_revision);
}

/** The events a command records; [] for a repeat (a spend already made, a refund already given, a build never paid for). */
export function decide(command: CreditsCommand, state: CreditsState): CreditsEvent[] {
  switch (command.type) {
    case 'Grant':
      return [{ type: 'CreditsGranted', data: { account_id: command.account_id, mode: command.mode, amount: command.amount, credits: state.balance + command.amount, granted_at: command.now } }];
    case 'Spend': {
      // Retried with the same request (the creation's build 1, or a rebuild from the same job revision): the spend already recorded.
      if (earlierSpend(state, command.spend)) return [];
      // A build number is never spent twice: a rebuild after one that was refunded (its job
      // moved on) takes the next number, so each build has at most one spend and one refund.
      const build = Math.max(command.spend.build, ...(state.spends.get(command.spend.job_id) ?? []).map((s) => s.build + 1));
      if (state.balance < 1) throw insufficientCredits();
      const spent: CreditsSpent = { account_id: command.account_id, mode: command.mode, amount: 1, credits: state.balance - 1, ...command.spend, build, spent_at: command.now };
      return [{ type: 'CreditsSpent', data: spent }];
    }
    case 'Refund': {
      // Once, and only for a build a credit was spent on.
      const paid = state.spends.get(command.job_id)?.some((s) => s.build === command.build);
      if (!paid || state.refunded.has(buildKey(command.job_id, command.build))) return [];
      const refunded: CreditsRefunded = {
        account_id: command.account_id, mode: command.mode, amount: 1, credits: state.balance + 1, job_id: command.job_id, build: command.build, reason: command.reason, refunded_at: command.now,
      };
      return [{ type: 'CreditsRefunded', data: refunded }];
    }
  }
}

export const creditsDecider: Decider<CreditsCommand, CreditsEvent, CreditsState> = { initialState, evolve, decide };
