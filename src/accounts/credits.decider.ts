/**
 * Generation credits of one account and mode (stream `credits-<mode>-<account>`) as a pure
 * decider for what accounts records there: grants. The factory spends and refunds credits
 * on the same stream; every event states the balance after it, so the balance is the
 * `credits` of the stream's last event, whichever context recorded it.
 */
import type { Decider } from '../event-store/stream-commands';
import type { CreditsRefunded, CreditsSpent } from '../factory/events';
import type { Mode } from '../platform/mode';
import type { CreditsGranted } from './events';

export type CreditsEvent =
  | { type: 'CreditsGranted'; data: CreditsGranted }
  | { type: 'CreditsSpent'; data: CreditsSpent }
  | { type: 'CreditsRefunded'; data: CreditsRefunded };

export type CreditsCommand = { type: 'GrantCredits'; account_id: string; mode: Mode; amount: number; now: string };

export interface CreditsState {
  /** The balance: the `credits` of the stream's last event, 0 while it has none. */
  credits: number;
}

export const initialState = (): CreditsState => ({ credits: 0 });

export function evolve(state: CreditsState, event: CreditsEvent): CreditsState {
  switch (event.type) {
    case 'CreditsGranted':
    case 'CreditsSpent':
    case 'CreditsRefunded':
      return { credits: event.data.credits };
    default:
      return state;
  }
}

export function decide(command: CreditsCommand, state: CreditsState): CreditsEvent[] {
  switch (command.type) {
    case 'GrantCredits':
      return [
        {
          type: 'CreditsGranted',
          data: { account_id: command.account_id, mode: command.mode, amount: command.amount, credits: state.credits + command.amount, granted_at: command.now },
        },
      ];
  }
}

export const creditsDecider: Decider<CreditsCommand, CreditsEvent, CreditsState> = { initialState, evolve, decide };
