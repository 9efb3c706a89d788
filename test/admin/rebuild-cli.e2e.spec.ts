import type { AddressInfo } from 'node:net';
import { runCli } from '../../src/cli/main';
import { ADMIN_TOKEN, startTestApp, TestApp } from '../support/app';

/**
 * A rebuild can take longer than an HTTP connection may stay idle: the API answers before
 * then with the builds still catching up, and `svc projections rebuild` watches them until
 * they serve. HTTP_IDLE_TIMEOUT_MS at its minimum makes the API answer at once.
 */
describe('svc projections rebuild when the API answers before the new builds serve', () => {
  let t: TestApp;
  let url: string;
  beforeAll(async () => {
    t = await startTestApp({ env: { HTTP_IDLE_TIMEOUT_MS: '1000' } });
    await t.app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(() => t.close());

  const builds = async () => Object.fromEntries((await t.admin('GET', '/admin/projections')).body.items.map((p: any) => [p.name, p.build]));

  it('answers at once with the builds still rebuilding, and the CLI waits until every one serves', async () => {
    const account = (await t.admin('POST', '/admin/accounts', { name: 'Rebuilt', email: 'rebuilt@example.com' })).body;
    const before = await builds();

    const answered = await t.admin('POST', '/admin/projections/all/rebuild');
    expect(answered.status).toBe(200);
    // Builds beside live ones run one at a time: most of them have not even started.
    expect(answered.body.items.filter((p: any) => p.rebuilding).length).toBeGreaterThan(1);

    let stdout = '';
    let stderr = '';
    const code = await runCli(['projections', 'rebuild', '--all', '--json'], (s) => (stdout += s), (s) => (stderr += s), { SVC_URL: url, ADMIN_TOKEN });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const rebuilt = JSON.parse(stdout);
    expect(rebuilt.items.map((p: any) => p.name).sort()).toEqual(Object.keys(before).sort());
    for (const item of rebuilt.items) {
      expect(item.rebuilding).toBeNull();
      expect(item.build).not.toBe(before[item.name]);
    }
    // What the read models serve is unchanged by the new builds.
    expect((await t.admin('GET', `/admin/accounts/${account.id}`)).body).toEqual(account);
  });
});
