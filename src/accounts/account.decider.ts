/**
 * An account stream (`account-<id>`) as a pure decider: no I/O, no clock, no id generation;
 * the command carries those. The slug an account is created with is claimed on its own
 * stream first (create-account.ts): that claim is the "one account per slug" boundary.
 */
import type { Decider } from '../event-store/stream-commands';
import { Errors } from '../platform/errors';
import type { AccountCreated } from './events';

export type AccountEvent = { type: 'AccountCreated'; data: AccountCreated };

export type AccountCommand = {
  type: 'CreateAccount';
  account_id: string;
  /** Claimed already on its slug stream. */
  slug: string;
  name: string;
  email: string;
  now: string;
};

export interface AccountState {
  /** null: no account has this id. */
  created: AccountCreated | null;
}

export const initialState = (): AccountState => ({ created: null });

export function evolve(state: AccountState, event: AccountEvent): AccountState {
  switch (event.type) {
    case 'AccountCreated':
      return state.created ? state : { created: event.data };
    default:
      return state;
  }
}

export function decide(command: AccountCommand, state: AccountState): AccountEvent[] {
  switch (command.type) {
    case 'CreateAccount':
      // An id is created once (what appending at no_stream answered when it was taken).
      if (state.created) throw Errors.conflict();
      return [
        {
          type: 'AccountCreated',
          data: { account_id: command.account_id, slug: command.slug, name: command.name, email: command.email, created_at: command.now },
        },
      ];
  }
}

export const accountDecider: Decider<AccountCommand, AccountEvent, AccountState> = { initialState, evolve, decide };
