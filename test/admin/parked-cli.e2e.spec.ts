import { randomUUID } from 'node:crypto';
import { EVENT_STORE, EventStore } from '../../src/event-store/event-store';
import { startTestApp, TestApp } from '../support/app';
import { serveForCli, svc } from '../support/cli';
import { eventually } from '../support/eventually';

/**
 * Issue 9: an event a read model cannot take is parked and the read model goes on; the
 * operator sees it (`svc projections status`, `svc projections parked`) and applies it again
 * with `svc projections retry-parked` once the cause is fixed.
 */
describe('svc projections parked and retry-parked', () => {
  let t: TestApp;
  let restore: () => void;
  beforeAll(async () => {
    t = await startTestApp({ env: { CONSUMER_MAX_ATTEMPTS: '2' } });
    restore = await serveForCli(t);
  });
  afterAll(async () => {
    restore();
    await t.close();
  });

  const json = async (...argv: string[]) => {
    const res = await svc(...argv, '--json');
    expect({ code: res.code, stderr: res.stderr }).toEqual({ code: 0, stderr: '' });
    return JSON.parse(res.stdout);
  };

  it('parks an AccountCreated the accounts read model cannot store, goes on, and retries it on demand', async () => {
    const store = t.app.get<EventStore>(EVENT_STORE);
    const accountId = `acct_${randomUUID().slice(0, 8)}`;
    // Written by an older release that allowed no email: accounts.email is NOT NULL.
    const bad = await store.append(`account-${accountId}`, [
      { type: 'AccountCreated', data: { account_id: accountId, slug: 'no-email', name: 'No Email', email: null, created_at: new Date().toISOString() } },
    ], 'no_stream');
    // Later events still reach the read model.
    const created = await t.admin('POST', '/admin/accounts', { name: 'After The Bad One', email: 'after@example.com' });
    expect(created.status).toBe(201);

    const parked = await eventually(async () => {
      const list = await json('projections', 'parked');
      return list.items.length === 1 && list;
    }, 20000, 'the event to be parked');
    expect(parked.items[0]).toMatchObject({ consumer: 'accounts:v1', position: bad.position, type: 'AccountCreated', attempts: 2 });
    expect(parked.items[0].error).toMatch(/email/);
    expect((await t.admin('GET', `/admin/accounts/${created.body.slug}`)).status).toBe(200);
    const status = await json('projections', 'status');
    expect(status.items.find((i: any) => i.name === 'accounts')).toMatchObject({ parked: 1, error: null, stalled_since: null });
    expect((await svc('projections', 'status')).stdout).toMatch(/accounts\s+accounts:v1\s+\S+\s+1\s+ok/);

    // Still failing: it stays parked, with the new attempt counted.
    expect(await json('projections', 'retry-parked', 'accounts')).toEqual({ retried: 0, still_parked: 1 });

    // The operator repairs the cause (here: the column takes a missing email) and retries.
    await t.db.exec(`ALTER TABLE rm_accounts_v1.accounts ALTER COLUMN email DROP NOT NULL`);
    expect(await json('projections', 'retry-parked', 'accounts')).toEqual({ retried: 1, still_parked: 0 });
    expect((await t.admin('GET', '/admin/accounts/no-email')).status).toBe(200);
    expect((await json('projections', 'parked')).items).toEqual([]);
  });

  it('answers 404 for an unknown name', async () => {
    const res = await svc('projections', 'retry-parked', 'nope');
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/not_found/);
  });
});
