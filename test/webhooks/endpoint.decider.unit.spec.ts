import { EndpointCommand, endpointDecider, EndpointEvent } from '../../src/webhooks/endpoint.decider';
import type { WebhookEndpointUpdated } from '../../src/webhooks/events';
import { deciderSpec } from '../support/decider-spec';

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

  it('the state after an update is what the API answers: the changes and their time', () => {
    const state = [created, updated({ description: 'store', enabled: false })].reduce(endpointDecider.evolve, endpointDecider.initialState());
    expect(state).toMatchObject({ description: 'store', enabled: false, url: 'http://localhost:4242/hooks', created_at: NOW, updated_at: LATER, deleted: false });
  });
});
