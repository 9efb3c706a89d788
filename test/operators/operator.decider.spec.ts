import { operatorDecider } from '../../src/operators/operator.decider';
import { operatorsProjection } from '../../projections/operators.projection';
import { assertOperatorMay, roleForRoute } from '../../src/platform/auth/operator';
import { deciderSpec, projectionSpec } from '../support/decider-spec';

const hash = (c: string) => c.repeat(64);
const created = (at: string, token = hash('a'), role: 'finance' | 'operations' | 'admin' = 'finance') =>
  ({ type: 'OperatorCreated', data: { name: 'alice', role, token_hash: token, created_at: at } }) as const;
const revoked = (at: string) => ({ type: 'OperatorRevoked', data: { name: 'alice', revoked_at: at } }) as const;

describe('the operator decider (issue 38)', () => {
  const spec = deciderSpec(operatorDecider);

  it('creates an operator once while its token works; after a revocation the name takes a new token', () => {
    spec.given([]).when({ type: 'CreateOperator', name: 'alice', role: 'finance', token_hash: hash('a'), now: 't1' }).then([created('t1')]);
    spec.given([created('t1')]).when({ type: 'CreateOperator', name: 'alice', role: 'admin', token_hash: hash('b'), now: 't2' }).thenRefuses({ status: 409, code: 'operator_exists' });
    spec.given([created('t1'), revoked('t2')]).when({ type: 'CreateOperator', name: 'alice', role: 'admin', token_hash: hash('b'), now: 't3' }).then([created('t3', hash('b'), 'admin')]);
  });

  it('revokes once; an unknown operator is 404', () => {
    spec.given([created('t1')]).when({ type: 'RevokeOperator', name: 'alice', now: 't2' }).then([revoked('t2')]);
    spec.given([created('t1'), revoked('t2')]).when({ type: 'RevokeOperator', name: 'alice', now: 't3' }).then([]);
    spec.given([]).when({ type: 'RevokeOperator', name: 'alice', now: 't1' }).thenRefuses({ status: 404, code: 'not_found' });
  });
});

describe('the operators read model', () => {
  it('holds the newest token of each name, and its revocation', async () => {
    await projectionSpec(operatorsProjection)
      .given([
        { streamId: 'operator-alice', ...created('2026-01-01T00:00:00.000Z') },
        { streamId: 'operator-alice', ...revoked('2026-01-02T00:00:00.000Z') },
        { streamId: 'operator-alice', ...created('2026-01-03T00:00:00.000Z', hash('b'), 'operations') },
      ])
      .then("SELECT name, role, token_hash, revoked_at FROM operators", [{ name: 'alice', role: 'operations', token_hash: hash('b'), revoked_at: null }]);
  });
});

describe('roles by route', () => {
  it.each([
    ['/admin/purchases/:id/refund', 'finance'],
    ['/admin/disputes', 'finance'],
    ['/admin/disputes/:id/close', 'finance'],
    ['/admin/payouts/run', 'finance'],
    ['/admin/ledger/journal', 'finance'],
    ['/admin/projections/:name/rebuild', 'operations'],
    ['/admin/webhook_endpoints/:id', 'operations'],
    ['/admin/keys', 'operations'],
    ['/metrics', 'operations'],
    ['/admin/accounts', 'admin'],
    ['/admin/credits', 'admin'],
    ['/admin/operators', 'admin'],
    ['/admin/disputesx', 'admin'],
  ])('%s needs %s', (route, role) => {
    expect(roleForRoute(route)).toBe(role);
  });

  it('admin may do all; another role only its own, refused with 403 operator_role_forbidden naming the role', () => {
    expect(() => assertOperatorMay({ name: 'root', role: 'admin' }, '/admin/operators')).not.toThrow();
    expect(() => assertOperatorMay({ name: 'fiona', role: 'finance' }, '/admin/ledger/verify')).not.toThrow();
    expect(() => assertOperatorMay({ name: 'fiona', role: 'finance' }, '/admin/keys')).toThrow(expect.objectContaining({ status: 403, code: 'operator_role_forbidden', extra: { role_required: 'operations', role: 'finance' } }));
  });
});
