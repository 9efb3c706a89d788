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

  it('serves requests through a not-ready window, a busy spell, a failover (NotLeader) and a crash after a write, writing each once (no 500)', async () => {
    const open = async (name: string, refuse: () => void) => {
      refuse();
      const email = `${name.toLowerCase().replace(/ /g, '-')}@example.com`;
      const opened = await t.admin('POST', '/admin/accounts', { name, email });
      expect([name, opened.status]).toEqual([name, 201]);
      return opened.body.id as string;
    };
    const ids = [
      await open('Not ready', () => standIn.notReady(800)),
      await open('Busy', () => standIn.busy(500)),
      await open('Failover', () => standIn.refuseAppends('not-leader')),
      await open('Timed out', () => standIn.refuseAppends('timeout-after-write')),
      await open('Crashed', () => standIn.refuseAppends('crash-after-write')),
    ];
    for (const id of ids) {
      const types = standIn.events.filter((e) => e.stream === `account-${id}`).map((e) => e.type);
      expect(types.length).toBeGreaterThan(0);
      expect(new Set(types).size).toBe(types.length);
    }
  });
});
