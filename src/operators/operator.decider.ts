/**
 * One operator's stream (`operator-<name>`) as a pure decider: no I/O, no clock, no secrets;
 * the command carries the token's hash and `now`.
 */
import type { Decider } from '../event-store/stream-commands';
import type { OperatorRole } from '../platform/auth/operator';
import { ApiError, Errors } from '../platform/errors';
import type { OperatorCreated, OperatorRevoked } from './events';

export type OperatorEvent = { type: 'OperatorCreated'; data: OperatorCreated } | { type: 'OperatorRevoked'; data: OperatorRevoked };

export type OperatorCommand =
  | { type: 'CreateOperator'; name: string; role: OperatorRole; token_hash: string; now: string }
  /** Idempotent: a revoked operator records nothing. */
  | { type: 'RevokeOperator'; name: string; now: string };

export interface OperatorState {
  /** The operator's current token, null: never created. */
  current: OperatorCreated | null;
  /** When the current token was revoked; null: it works. */
  revokedAt: string | null;
}

export const initialState = (): OperatorState => ({ current: null, revokedAt: null });

export function evolve(state: OperatorState, event: OperatorEvent): OperatorState {
  switch (event.type) {
    case 'OperatorCreated':
      return { current: event.data, revokedAt: null };
    case 'OperatorRevoked':
      return { ...state, revokedAt: event.data.revoked_at };
    default:
      return state;
  }
}

export function decide(command: OperatorCommand, state: OperatorState): OperatorEvent[] {
  switch (command.type) {
    case 'CreateOperator':
      // A name holds one working token at a time: revoke it first to issue another.
      if (state.current && !state.revokedAt) {
        throw new ApiError(409, 'operator_exists', `Operator "${command.name}" exists and its token works; revoke it first to issue a new one.`);
      }
      return [{ type: 'OperatorCreated', data: { name: command.name, role: command.role, token_hash: command.token_hash, created_at: command.now } }];
    case 'RevokeOperator':
      if (!state.current) throw Errors.notFound('operator');
      if (state.revokedAt) return [];
      return [{ type: 'OperatorRevoked', data: { name: command.name, revoked_at: command.now } }];
  }
}

export const operatorDecider: Decider<OperatorCommand, OperatorEvent, OperatorState> = { initialState, evolve, decide };
