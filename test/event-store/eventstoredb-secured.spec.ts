import { randomUUID } from 'node:crypto';
import { EventStoreAccessDeniedError } from '../../src/event-store/event-store';
import { EventStoreDbEventStore } from '../../src/event-store/eventstoredb/eventstoredb-event-store';
import { toApiError } from '../../src/platform/error-filter';
import { EsdbStandIn, securedOptions } from '../support/esdb-standin';

/**
 * A secured node (TLS, users and roles): what the adapter does when the user it connects
 * as lacks a role. A group's parked stream is readable by $admins only; creating a group and
 * replaying its parked events need $ops or $admins. Each refusal says which role is needed.
 */
describe('EventStoreDbEventStore on a secured node', () => {
  let standIn: EsdbStandIn;
  const stores: EventStoreDbEventStore[] = [];
  beforeAll(async () => {
    standIn = await new EsdbStandIn({
      secured: securedOptions({
        admin: { password: 'changeit', roles: ['$admins'] },
        operator: { password: 'op-pass', roles: ['$ops'] },
        svc: { password: 'svc-pass', roles: [] },
      }),
    }).start();
  });
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await standIn.stop();
  });
  const storeAs = async (user: string, password: string) => {
    const store = new EventStoreDbEventStore({ url: standIn.urlAs(user, password), streamPrefixes: ['app-'], retryMs: 2000 });
    stores.push(store);
    await store.start();
    return store;
  };
  const until = async (what: string, done: () => boolean) => {
    for (const deadline = Date.now() + 10_000; !done(); await new Promise((r) => setTimeout(r, 20))) {
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    }
  };
  const options = (onError: (e: unknown) => void) => ({ types: [`Job${randomUUID().slice(0, 6)}`], maxRetries: 0, messageTimeoutMs: 10_000, bufferSize: 4, onError });

  it('lets an $admins user do everything: parked events listed, replayed', async () => {
    const store = await storeAs('admin', 'changeit');
    const group = `g-${randomUUID().slice(0, 8)}`;
    const o = options(() => undefined);
    const sub = store.subscribePersistent(group, o, async () => {
      throw new Error('parked');
    });
    try {
      await store.append('app-a1', [{ type: o.types[0], data: {} }], 'no_stream');
      let parked = 0;
      for (const deadline = Date.now() + 10_000; parked === 0 && Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) parked = (await store.parkedEvents(group)).length;
      expect(parked).toBe(1);
      expect(await store.replayParked(group)).toBe(1);
    } finally {
      await sub.stop();
    }
  });

  it('tells an $ops user that listing or replaying parked events needs $admins (the parked stream\'s ACL), as a 503 naming the event store', async () => {
    const store = await storeAs('operator', 'op-pass');
    const group = `g-${randomUUID().slice(0, 8)}`;
    const errors: unknown[] = [];
    const handled: string[] = [];
    const o = options((e) => errors.push(e));
    // Creating the group is allowed to $ops: the consumer works.
    const sub = store.subscribePersistent(group, o, async (e) => {
      handled.push(e.id);
    });
    try {
      const id = randomUUID();
      await store.append('app-o1', [{ id, type: o.types[0], data: {} }], 'no_stream');
      await until('the event was handled', () => handled.includes(id));
      expect(errors).toEqual([]);
    } finally {
      await sub.stop();
    }
    const listed = await store.parkedEvents(group).catch((e) => e);
    expect(listed).toBeInstanceOf(EventStoreAccessDeniedError);
    expect(listed.message).toContain(`reading the parked events of ${group} was refused (AccessDenied)`);
    expect(listed.message).toContain('readable by $admins only');
    const replayed = await store.replayParked(group).catch((e) => e);
    expect(replayed).toBeInstanceOf(EventStoreAccessDeniedError);
    expect(replayed.message).toContain(`replaying the parked events of ${group} was refused (AccessDenied)`);
    expect(replayed.message).toContain('$admins');
    const answer = toApiError(listed);
    expect([answer.status, answer.message]).toEqual([503, 'The event store is unavailable; retry with backoff.']);
  });

  it('tells a consumer whose user has no role that creating its group needs $ops or $admins; its appends and reads still work', async () => {
    const store = await storeAs('svc', 'svc-pass');
    await store.append('app-s1', [{ type: 'Made', data: {} }], 'no_stream');
    expect((await store.readStream('app-s1')).map((e) => e.type)).toEqual(['Made']);
    const errors: unknown[] = [];
    const group = `g-${randomUUID().slice(0, 8)}`;
    const sub = store.subscribePersistent(group, options((e) => errors.push(e)), async () => undefined);
    try {
      await until('onError heard of it', () => errors.length > 0);
    } finally {
      await sub.stop();
    }
    expect(errors[0]).toBeInstanceOf(EventStoreAccessDeniedError);
    expect((errors[0] as Error).message).toContain(`creating persistent subscription group ${group} was refused (AccessDenied)`);
    expect((errors[0] as Error).message).toContain('$ops or $admins');
  });

  it('refuses a wrong password on every call, saying the user was refused', async () => {
    const store = new EventStoreDbEventStore({ url: standIn.urlAs('svc', 'wrong'), streamPrefixes: ['app-'], retryMs: 1000 });
    stores.push(store);
    const error = await store.append('app-w1', [{ type: 'Made', data: {} }], 'any').catch((e) => e);
    expect(error).toBeInstanceOf(EventStoreAccessDeniedError);
    expect(error.message).toContain('append to app-w1 was refused (AccessDenied) to the user the service connects as');
    expect(await standIn.events.some((e) => e.stream === 'app-w1')).toBe(false);
  });
});
