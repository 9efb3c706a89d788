import { EndpointCommand, endpointDecider, EndpointEvent } from '../../src/webhooks/endpoint.decider';
import type { WebhookEndpointUpdated } from '../../src/webhooks/events';
import { webhookEndpointsProjection } from '../../projections/webhook-endpoints.projection';
import { deciderSpec, projectionSpec } from '../support/decider-spec';

const NOW = '2026-01-01T00:00:00.000Z';
const LATER = '2026-01-01T00:05:00.000Z';
const owner = { accountId: 'acct_1', mode: 'test' } as const;
const stranger = { accountId: 'acct_2', mode: 'test' } as const;

const created: EndpointEvent = {
  type: 'WebhookEndpointCreated',
  data: {
    endpoint_id: 'we_1',
    account_id: 'acct_1',
    mode: 'test',
    url: 'http://localhost:4242/hooks',
    events: ['payout.paid', 'listing.purchased'],
    description: 'shop',
    enabled: true,
    secret_sealed: 'sealed',
    created_at: NOW,
  },
};
const deleted: EndpointEvent = { type: 'WebhookEndpointDeleted', data: { endpoint_id: 'we_1', account_id: 'acct_1', mode: 'test', deleted_at: LATER } };
const update = (fields: Omit<Extract<EndpointCommand, { type: 'UpdateEndpoint' }>, 'type' | 'owner' | 'now'>, by: typeof owner | typeof stranger = owner): EndpointCommand => ({
  type: 'UpdateEndpoint',
  owner: by,
  ...fields,
  now: LATER,
});
const updated = (changes: WebhookEndpointUpdated['changes']): EndpointEvent => ({
  type: 'WebhookEndpointUpdated',
  data: { endpoint_id: 'we_1', account_id: 'acct_1', mode: 'test', changes, updated_at: LATER },
});

describe('webhook endpoint decider', () => {
  it('creates an enabled endpoint, dropping unknown event types and duplicates', () => {
    deciderSpec(endpointDecider)
      .given([])
      .when({
        type: 'CreateEndpoint',
        endpoint_id: 'we_1',
        account_id: 'acct_1',
        mode: 'test',
        url: 'http://localhost:4242/hooks',
        events: ['payout.paid', 'no.such.event', 'listing.purchased', 'payout.paid'],
        description: 'shop',
        secret_sealed: 'sealed',
        now: NOW,
      })
      .then([created]);
  });

  it('an endpoint id is created once: a second creation is a 409 conflict', () => {
    const { type: _type, data } = created;
    deciderSpec(endpointDecider)
      .given([created])
      .when({ type: 'CreateEndpoint', ...data, now: LATER })
      .thenRefuses({ status: 409, code: 'conflict' });
  });

  it('an update records only the fields that change; an events list given is always recorded, filtered', () => {
    deciderSpec(endpointDecider)
      .given([created])
      .when(update({ url: 'http://localhost:4242/hooks', description: 'store', enabled: true, events: ['payout.paid', 'bogus'] }))
      .then([updated({ events: ['payout.paid'], description: 'store' })]);
  });

  it('an update that changes nothing records nothing, and null fields count as absent', () => {
    deciderSpec(endpointDecider)
      .given([created])
      .when(update({ url: 'http://localhost:4242/hooks', description: 'shop', enabled: true }))
      .then([]);
    deciderSpec(endpointDecider).given([created]).when(update({ url: null, events: null, description: null, enabled: null })).then([]);
  });

  it('an update repeated records nothing the second time', () => {
    deciderSpec(endpointDecider)
      .given([created, updated({ enabled: false })])
      .when(update({ enabled: false }))
      .then([]);
  });

  it('deletes an endpoint', () => {
    deciderSpec(endpointDecider).given([created]).when({ type: 'DeleteEndpoint', owner, now: LATER }).then([deleted]);
  });

  it('a deleted endpoint cannot be updated or deleted again: 404', () => {
    const notFound = { status: 404, code: 'not_found', message: 'No such webhook endpoint.' };
    deciderSpec(endpointDecider).given([created, deleted]).when(update({ enabled: false })).thenRefuses(notFound);
    deciderSpec(endpointDecider).given([created, deleted]).when({ type: 'DeleteEndpoint', owner, now: LATER }).thenRefuses(notFound);
  });

  it("another account's endpoint is 404 like a missing one, never 403", () => {
    deciderSpec(endpointDecider).given([created]).when(update({ enabled: false }, stranger)).thenRefuses({ status: 404, code: 'not_found' });
    deciderSpec(endpointDecider).given([created]).when({ type: 'DeleteEndpoint', owner: stranger, now: LATER }).thenRefuses({ status: 404, code: 'not_found' });
    deciderSpec(endpointDecider).given([]).when({ type: 'DeleteEndpoint', owner, now: LATER }).thenRefuses({ status: 404, code: 'not_found' });
  });

  describe('rotating the secret', () => {
    const rotate = (expires_in_seconds: number, by: typeof owner | typeof stranger = owner): EndpointCommand => ({
      type: 'RotateSecret',
      owner: by,
      secret_sealed: 'sealed-2',
      expires_in_seconds,
      now: LATER,
    });
    const rotated = (previous: string | null, expiresAt: string | null): EndpointEvent => ({
      type: 'WebhookEndpointSecretRotated',
      data: { endpoint_id: 'we_1', account_id: 'acct_1', mode: 'test', secret_sealed: 'sealed-2', previous_secret_sealed: previous, previous_secret_expires_at: expiresAt, rotated_at: LATER },
    });

    it('records the new secret and keeps the old one signing until now + expires_in', () => {
      deciderSpec(endpointDecider).given([created]).when(rotate(86_400)).then([rotated('sealed', '2026-01-02T00:05:00.000Z')]);
    });

    it('expires_in 0: the old secret stops at once, so none is kept', () => {
      deciderSpec(endpointDecider).given([created]).when(rotate(0)).then([rotated(null, null)]);
    });

    it('a second rotation keeps only the secret it replaces', () => {
      const first = rotated('sealed', '2026-01-02T00:05:00.000Z');
      deciderSpec(endpointDecider)
        .given([created, first])
        .when({ ...rotate(60), secret_sealed: 'sealed-3' } as EndpointCommand)
        .then([
          {
            type: 'WebhookEndpointSecretRotated',
            data: { ...(first.data as object), secret_sealed: 'sealed-3', previous_secret_sealed: 'sealed-2', previous_secret_expires_at: '2026-01-01T00:06:00.000Z' },
          } as EndpointEvent,
        ]);
    });

    it('the state signs with the new secret, the old one beside it, and is updated', () => {
      const state = [created, rotated('sealed', '2026-01-02T00:05:00.000Z')].reduce(endpointDecider.evolve, endpointDecider.initialState());
      expect(state).toMatchObject({ secret_sealed: 'sealed-2', previous_secret_sealed: 'sealed', previous_secret_expires_at: '2026-01-02T00:05:00.000Z', updated_at: LATER });
    });

    it("a deleted endpoint, another account's or none: 404", () => {
      deciderSpec(endpointDecider).given([created, deleted]).when(rotate(60)).thenRefuses({ status: 404, code: 'not_found' });
      deciderSpec(endpointDecider).given([created]).when(rotate(60, stranger)).thenRefuses({ status: 404, code: 'not_found' });
      deciderSpec(endpointDecider).given([]).when(rotate(60)).thenRefuses({ status: 404, code: 'not_found' });
    });
  });

  it('the read model keeps the previous secret and its expiry beside the new one', async () => {
    const streamId = 'webhookendpoint-test-we_1';
    const rotation = (secret: string, previous: string | null, expiresAt: string | null) => ({
      streamId,
      type: 'WebhookEndpointSecretRotated',
      data: { endpoint_id: 'we_1', account_id: 'acct_1', mode: 'test', secret_sealed: secret, previous_secret_sealed: previous, previous_secret_expires_at: expiresAt, rotated_at: LATER },
    });
    const sql = 'SELECT secret_sealed, previous_secret_sealed, previous_secret_expires_at::text AS expires, updated_at::text AS updated FROM webhook_endpoints';
    await projectionSpec(webhookEndpointsProjection)
      .given([{ streamId, ...created }, rotation('sealed-2', 'sealed', '2026-01-02T00:05:00.000Z')])
      .then(sql, [{ secret_sealed: 'sealed-2', previous_secret_sealed: 'sealed', expires: '2026-01-02 00:05:00+00', updated: '2026-01-01 00:05:00+00' }]);
    await projectionSpec(webhookEndpointsProjection)
      .given([{ streamId, ...created }, rotation('sealed-2', 'sealed', '2026-01-02T00:05:00.000Z'), rotation('sealed-3', null, null)])
      .then(sql, [{ secret_sealed: 'sealed-3', previous_secret_sealed: null, expires: null, updated: '2026-01-01 00:05:00+00' }]);
  });

  describe('a test event', () => {
    const requestTest = (by: typeof owner | typeof stranger = owner): EndpointCommand => ({ type: 'RequestTestEvent', owner: by, event_id: 'uuid-1', delivery_id: 'whd_1', now: LATER });

    it('is recorded on the endpoint stream with the ids the request answers with', () => {
      deciderSpec(endpointDecider)
        .given([created])
        .when(requestTest())
        .then([{ type: 'WebhookEndpointTestRequested', data: { endpoint_id: 'we_1', account_id: 'acct_1', mode: 'test', event_id: 'uuid-1', delivery_id: 'whd_1', requested_at: LATER } }]);
    });

    it('is refused for a disabled endpoint (400 invalid_request), and 404 for a deleted or foreign one', () => {
      deciderSpec(endpointDecider).given([created, updated({ enabled: false })]).when(requestTest()).thenRefuses({ status: 400, code: 'invalid_request' });
      deciderSpec(endpointDecider).given([created, deleted]).when(requestTest()).thenRefuses({ status: 404, code: 'not_found' });
      deciderSpec(endpointDecider).given([created]).when(requestTest(stranger)).thenRefuses({ status: 404, code: 'not_found' });
    });

    it('changes nothing about the endpoint', () => {
      const before = [created].reduce(endpointDecider.evolve, endpointDecider.initialState());
      const [event] = endpointDecider.decide(requestTest(), before);
      expect(endpointDecider.evolve(before, event)).toEqual(before);
    });
  });

  it('the state after an update is what the API answers: the changes and their time', () => {
    const state = [created, updated({ description: 'store', enabled: false })].reduce(endpointDecider.evolve, endpointDecider.initialState());
    expect(state).toMatchObject({ description: 'store', enabled: false, url: 'http://localhost:4242/hooks', created_at: NOW, updated_at: LATER, deleted: false });
  });
});
