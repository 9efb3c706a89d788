/**
 * An API key's stream (`apikey-<mode>-<key id>`) as a pure decider: no I/O, no clock, no
 * secrets; the command carries the key's id, lookup id and secret hash, and `now`.
 */
import type { Decider } from '../event-store/stream-commands';
import { ApiError, Errors } from '../platform/errors';
import type { Mode } from '../platform/mode';
import type { ApiKeyActivated, ApiKeyActivationOpened, ApiKeyCreated, ApiKeyRevoked, Tier } from './events';

export type ApiKeyEvent =
  | { type: 'ApiKeyCreated'; data: ApiKeyCreated }
  | { type: 'ApiKeyRevoked'; data: ApiKeyRevoked }
  | { type: 'ApiKeyActivated'; data: ApiKeyActivated }
  | { type: 'ApiKeyActivationOpened'; data: ApiKeyActivationOpened };

export type ApiKeyCommand =
  | {
      type: 'CreateApiKey';
      key_id: string;
      account_id: string;
      mode: Mode;
      tier: Tier;
      name: string;
      /** As asked for: duplicates collapse, and a premium key's list gains inference:run. */
      scopes: string[];
      lookup_id: string;
      secret_hash: string;
      expires_at: string | null;
      now: string;
    }
  /** Final and idempotent: a revoked key records nothing. */
  | { type: 'RevokeApiKey'; now: string }
  /** Its activation fee was paid. Idempotent: an active key records nothing. */
  | { type: 'ActivateApiKey'; checkout_session_id: string; now: string }
  /**
   * An activation checkout was opened for the key (see assertActivationOpenable, asked
   * before it opens): a fact about a checkout that exists, recorded whatever happened to
   * the key meanwhile (a payment landing must not fail it).
   */
  | { type: 'RecordActivationOpened'; checkout_session_id: string; checkout_url: string; expires_at: string; now: string };

export interface ApiKeyState {
  /** null: no key has this id in this mode. */
  created: ApiKeyCreated | null;
  active: boolean;
  revoked: boolean;
}

export const initialState = (): ApiKeyState => ({ created: null, active: false, revoked: false });

export function evolve(state: ApiKeyState, event: ApiKeyEvent): ApiKeyState {
  switch (event.type) {
    case 'ApiKeyCreated':
      return state.created ? state : { created: event.data, active: event.data.active, revoked: false };
    case 'ApiKeyActivated':
      return { ...state, active: true };
    case 'ApiKeyRevoked':
      return { ...state, revoked: true };
    default:
      return state;
  }
}

/** A key that exists, or 404. */
function existing(state: ApiKeyState): ApiKeyCreated {
  if (!state.created) throw Errors.notFound('API key');
  return state.created;
}

/**
 * `svc keys activation`: only an inactive key that is not revoked (a live premium key
 * whose activation is unpaid) has an activation to pay. Asked before its checkout opens.
 */
export function assertActivationOpenable(keyId: string, state: ApiKeyState): void {
  existing(state);
  if (state.revoked) throw new ApiError(400, 'key_revoked', `API key ${keyId} is revoked; create a new key.`);
  if (state.active) throw new ApiError(400, 'already_active', `API key ${keyId} is active already; only an inactive live premium key has an activation to pay.`);
}

export function decide(command: ApiKeyCommand, state: ApiKeyState): ApiKeyEvent[] {
  switch (command.type) {
    case 'CreateApiKey': {
      // A key id is created once (what appending at no_stream answered when it was taken).
      if (state.created) throw Errors.conflict();
      if (command.expires_at !== null && Date.parse(command.expires_at) <= Date.parse(command.now)) {
        throw Errors.validationFailed('Invalid field "expires_at": must be in the future.');
      }
      const scopes = [...new Set(command.scopes)];
      // Spec section 5: inference:run is for premium keys only; a free key with it would only ever get 403.
      if (command.tier !== 'premium' && scopes.includes('inference:run')) {
        throw Errors.validationFailed('Invalid field "scopes": inference:run is for premium keys only; create the key with tier "premium" (svc keys create --tier premium).');
      }
      // Premium keys always carry inference:run; an empty list is already unrestricted.
      if (command.tier === 'premium' && scopes.length && !scopes.includes('inference:run')) scopes.push('inference:run');
      // A live premium key waits for its one-time activation payment; test premium is free.
      const active = !(command.tier === 'premium' && command.mode === 'live');
      return [
        {
          type: 'ApiKeyCreated',
          data: {
            key_id: command.key_id,
            account_id: command.account_id,
            mode: command.mode,
            tier: command.tier,
            name: command.name,
            scopes,
            lookup_id: command.lookup_id,
            secret_hash: command.secret_hash,
            active,
            expires_at: command.expires_at,
            created_at: command.now,
          },
        },
      ];
    }
    case 'RevokeApiKey': {
      const key = existing(state);
      if (state.revoked) return [];
      return [{ type: 'ApiKeyRevoked', data: { key_id: key.key_id, account_id: key.account_id, mode: key.mode, revoked_at: command.now } }];
    }
    case 'ActivateApiKey': {
      const key = existing(state);
      if (state.active) return [];
      return [
        {
          type: 'ApiKeyActivated',
          data: { key_id: key.key_id, account_id: key.account_id, mode: key.mode, checkout_session_id: command.checkout_session_id, activated_at: command.now },
        },
      ];
    }
    case 'RecordActivationOpened': {
      const key = existing(state);
      return [
        {
          type: 'ApiKeyActivationOpened',
          data: {
            key_id: key.key_id,
            account_id: key.account_id,
            mode: key.mode,
            checkout_session_id: command.checkout_session_id,
            checkout_url: command.checkout_url,
            expires_at: command.expires_at,
            opened_at: command.now,
          },
        },
      ];
    }
  }
}

export const apiKeyDecider: Decider<ApiKeyCommand, ApiKeyEvent, ApiKeyState> = { initialState, evolve, decide };
