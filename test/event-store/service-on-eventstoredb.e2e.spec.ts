import { EsdbStandIn } from '../support/esdb-standin';
import { startTestApp, TestApp } from '../support/app';

/** EVENTSTORE_URL selects EventStoreDB for the events; read models stay in Postgres. */
describe('the service with EVENTSTORE_URL set (on the stand-in)', () => {
  let standIn: EsdbStandIn;
  let t: TestApp;
  beforeAll(async () => {
    standIn = await new EsdbStandIn().start();
    t = await startTestApp({ env: { EVENTSTORE_URL: standIn.url } });
  });
  afterAll(async () => {
    await t?.close();
    await standIn.stop();
  });

  it('appends to EventStoreDB, not to the events table, and serves what it wrote back', async () => {
    const { accountId, key } = await t.accountWithKey();
    expect(standIn.events.some((e) => e.stream === `account-${accountId}`)).toBe(true);
    const { rows } = await t.db.query<{ n: string }>('SELECT count(*) AS n FROM events');
    expect(Number(rows[0].n)).toBe(0);
    const me = await t.request('GET', '/v1/me', { key });
    expect([me.status, me.body?.id]).toEqual([200, accountId]);
  });

  it('answers 503 service_unavailable while EventStoreDB is down, and serves again once it is back', async () => {
    await standIn.stop();
    try {
      const down = await t.admin('POST', '/admin/accounts', { name: 'While down', email: 'down@example.com' });
      expect([down.status, down.body?.error?.code]).toEqual([503, 'service_unavailable']);
      expect(down.headers['retry-after']).toBe('1');
    } finally {
      await standIn.start(standIn.port);
    }
    let status = 0;
    for (let i = 0; i < 50 && status !== 201; i++) {
      status = (await t.admin('POST', '/admin/accounts', { name: 'Back', email: 'back@example.com' })).status;
      if (status !== 201) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(201);
    expect(standIn.events.filter((e) => e.type === 'AccountOpened' || e.stream.startsWith('account-')).length).toBeGreaterThan(0);
  });
});
