import { accountDecider } from '../../src/accounts/account.decider';
import { ApiKeyCommand, ApiKeyEvent, apiKeyDecider, assertActivationOpenable } from '../../src/accounts/api-key.decider';
import type { ApiKeyCreated, Tier } from '../../src/accounts/events';
import type { Mode } from '../../src/platform/mode';
import { deciderSpec } from '../support/decider-spec';

const NOW = '2026-01-01T00:00:00.000Z';
const LATER = '2026-01-01T00:05:00.000Z';

describe('account decider', () => {
  const create = { type: 'CreateAccount', account_id: 'acct_1', slug: 'acme', name: 'Acme', email: 'ops@acme.test', now: NOW } as const;
  const created = { type: 'AccountCreated', data: { account_id: 'acct_1', slug: 'acme', name: 'Acme', email: 'ops@acme.test', created_at: NOW } } as const;

  it('creates the account with the slug it claimed, at the command time', () => {
    deciderSpec(accountDecider).given([]).when(create).then([created]);
  });

  it('an account id is created once: a second creation is a 409 conflict', () => {
    deciderSpec(accountDecider).given([created]).when(create).thenRefuses({ status: 409, code: 'conflict' });
  });
});

describe('API key decider', () => {
  const createKey = (tier: Tier, mode: Mode, scopes: string[], expires_at: string | null = null): ApiKeyCommand => ({
    type: 'CreateApiKey',
    key_id: 'key_1',
    account_id: 'acct_1',
    mode,
    tier,
    name: 'ci',
    scopes,
    lookup_id: 'sk_test_abcd',
    secret_hash: 'f00d',
    expires_at,
    now: NOW,
  });
  const keyCreated = (over: Partial<ApiKeyCreated> = {}): ApiKeyEvent => ({
    type: 'ApiKeyCreated',
    data: {
      key_id: 'key_1',
      account_id: 'acct_1',
      mode: 'live',
      tier: 'premium',
      name: 'ci',
      scopes: [],
      lookup_id: 'sk_test_abcd',
      secret_hash: 'f00d',
      active: false,
      expires_at: null,
      created_at: NOW,
      ...over,
    },
  });
  const inactive = keyCreated();
  const revoked: ApiKeyEvent = { type: 'ApiKeyRevoked', data: { key_id: 'key_1', account_id: 'acct_1', mode: 'live', revoked_at: NOW } };
  const activated: ApiKeyEvent = {
    type: 'ApiKeyActivated',
    data: { key_id: 'key_1', account_id: 'acct_1', mode: 'live', checkout_session_id: 'cs_live_1', activated_at: LATER },
  };
  const activate: ApiKeyCommand = { type: 'ActivateApiKey', checkout_session_id: 'cs_live_1', now: LATER };
  const opened: ApiKeyCommand = { type: 'RecordActivationOpened', checkout_session_id: 'cs_live_2', checkout_url: 'https://pay.test/cs_live_2', expires_at: LATER, now: NOW };
  const stateAfter = (events: ApiKeyEvent[]) => events.reduce(apiKeyDecider.evolve, apiKeyDecider.initialState());

  it('a free key is created active, its scopes without duplicates', () => {
    deciderSpec(apiKeyDecider)
      .given([])
      .when(createKey('free', 'live', ['models:read', 'models:read', 'webhooks:write'], LATER))
      .then([keyCreated({ tier: 'free', active: true, scopes: ['models:read', 'webhooks:write'], expires_at: LATER })]);
  });

  it('a live premium key is created inactive (its activation is unpaid), and a restricted one gains inference:run', () => {
    deciderSpec(apiKeyDecider)
      .given([])
      .when(createKey('premium', 'live', ['models:read']))
      .then([keyCreated({ scopes: ['models:read', 'inference:run'] })]);
  });

  it('a test premium key is active at once, and an unrestricted one stays unrestricted', () => {
    deciderSpec(apiKeyDecider).given([]).when(createKey('premium', 'test', [])).then([keyCreated({ mode: 'test', active: true })]);
  });

  it('refuses a key that would expire now or before', () => {
    deciderSpec(apiKeyDecider)
      .given([])
      .when(createKey('free', 'test', [], NOW))
      .thenRefuses({ status: 400, code: 'validation_failed', message: 'Invalid field "expires_at": must be in the future.' });
  });

  it('refuses inference:run on a free key', () => {
    deciderSpec(apiKeyDecider).given([]).when(createKey('free', 'test', ['inference:run'])).thenRefuses({ status: 400, code: 'validation_failed' });
  });

  it('a key id is created once: a second creation is a 409 conflict', () => {
    deciderSpec(apiKeyDecider).given([inactive]).when(createKey('premium', 'live', [])).thenRefuses({ status: 409, code: 'conflict' });
  });

  it('revokes a key, with the key it names', () => {
    deciderSpec(apiKeyDecider).given([inactive]).when({ type: 'RevokeApiKey', now: NOW }).then([revoked]);
  });

  it('revoking a revoked key again records nothing', () => {
    deciderSpec(apiKeyDecider).given([inactive, revoked]).when({ type: 'RevokeApiKey', now: LATER }).then([]);
  });

  it('a key that does not exist is 404, whatever the command', () => {
    for (const command of [{ type: 'RevokeApiKey', now: NOW } as const, activate, opened]) {
      deciderSpec(apiKeyDecider).given([]).when(command).thenRefuses({ status: 404, code: 'not_found', message: 'No such API key.' });
    }
  });

  it('a paid activation activates an inactive key', () => {
    deciderSpec(apiKeyDecider).given([inactive]).when(activate).then([activated]);
  });

  it('a paid activation delivered again records nothing, nor does one for a key created active', () => {
    deciderSpec(apiKeyDecider).given([inactive, activated]).when(activate).then([]);
    deciderSpec(apiKeyDecider).given([keyCreated({ mode: 'test', active: true })]).when(activate).then([]);
  });

  it('a revoked key gets no activation checkout (400 key_revoked)', () => {
    expect(refusal(() => assertActivationOpenable('key_1', stateAfter([inactive, revoked])))).toMatchObject({
      status: 400,
      code: 'key_revoked',
      message: 'API key key_1 is revoked; create a new key.',
    });
  });

  it('an active key gets no activation checkout (400 already_active), an unpaid one does', () => {
    expect(refusal(() => assertActivationOpenable('key_1', stateAfter([inactive, activated])))).toMatchObject({ status: 400, code: 'already_active' });
    expect(refusal(() => assertActivationOpenable('key_1', stateAfter([keyCreated({ active: true })])))).toMatchObject({ code: 'already_active' });
    expect(refusal(() => assertActivationOpenable('key_1', stateAfter([])))).toMatchObject({ status: 404, code: 'not_found' });
    expect(refusal(() => assertActivationOpenable('key_1', stateAfter([inactive])))).toBeUndefined();
  });

  it('records an activation checkout once opened, even if the key was paid for meanwhile', () => {
    const recorded: ApiKeyEvent = {
      type: 'ApiKeyActivationOpened',
      data: { key_id: 'key_1', account_id: 'acct_1', mode: 'live', checkout_session_id: 'cs_live_2', checkout_url: 'https://pay.test/cs_live_2', expires_at: LATER, opened_at: NOW },
    };
    deciderSpec(apiKeyDecider).given([inactive]).when(opened).then([recorded]);
    deciderSpec(apiKeyDecider).given([inactive, activated]).when(opened).then([recorded]);
  });
});

function refusal(fn: () => void): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}
