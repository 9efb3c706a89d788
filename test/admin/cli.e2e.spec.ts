import type { AddressInfo } from 'node:net';
import { runCli } from '../../src/cli/main';
import { ProjectionRunner } from '../../src/projection-runner/projection-runner';
import { ADMIN_TOKEN, startTestApp, TestApp } from '../support/app';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('the svc operator CLI against a running service (decisions section 2)', () => {
  let t: TestApp;
  let url: string;
  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(() => t.close());

  async function svc(argv: string[], token = ADMIN_TOKEN) {
    let stdout = '';
    let stderr = '';
    const code = await runCli(argv, (s) => (stdout += s), (s) => (stderr += s), { SVC_URL: url, ADMIN_TOKEN: token });
    return { code, stdout, stderr };
  }

  /** Runs a command that must succeed with --json and returns its one JSON document. */
  async function svcJson(...argv: string[]) {
    const res = await svc([...argv, '--json']);
    expect({ code: res.code, stderr: res.stderr }).toEqual({ code: 0, stderr: '' });
    return JSON.parse(res.stdout);
  }

  /** A failure: the exit code and one line of reason on stderr, nothing on stdout. */
  async function svcFails(argv: string[], exitCode: number, token = ADMIN_TOKEN) {
    const res = await svc(argv, token);
    expect(res.code).toBe(exitCode);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/^svc: \S.*\n$/);
    expect(res.stderr.trimEnd().split('\n')).toHaveLength(1);
    return res.stderr;
  }

  const accountExists = async (slug: string) => {
    const res = await t.admin('GET', `/admin/accounts/${slug}`);
    expect([200, 404]).toContain(res.status);
    return res.status === 200;
  };

  let seq = 0;
  const newAccount = () => {
    const n = ++seq;
    return svcJson('accounts', 'create', '--name', `Cli Account ${n}`, '--email', `cli${n}@example.com`, '--slug', `cli-account-${n}`);
  };

  it('accounts create prints { id, slug, name, email, created_at }', async () => {
    const account = await svcJson('accounts', 'create', '--name', 'Cli Maker', '--email', 'maker@example.com');
    expect(account).toEqual({ id: expect.stringMatching(/^acct_/), slug: 'cli-maker', name: 'Cli Maker', email: 'maker@example.com', created_at: expect.stringMatching(ISO) });
    expect((await t.admin('GET', `/admin/accounts/${account.id}`)).body).toEqual(account);
  });

  it('keys create prints the key once with the fields of decisions section 2', async () => {
    const account = await newAccount();
    const free = await svcJson('keys', 'create', '--account', account.slug, '--mode', 'test', '--name', 'ci', '--scopes', 'models:read,payouts:read');
    expect(free).toEqual({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^svc_test_[A-Za-z0-9]{40}$/),
      name: 'ci',
      mode: 'test',
      tier: 'free',
      scopes: ['models:read', 'payouts:read'],
      active: true,
      expires_at: null,
      activation_checkout_url: null,
    });

    const premium = await svcJson('keys', 'create', '--account', account.id, '--tier', 'premium', '--mode', 'live', '--scopes', 'models:read');
    expect(premium).toEqual({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^svc_live_[A-Za-z0-9]{40}$/),
      name: expect.any(String),
      mode: 'live',
      tier: 'premium',
      scopes: expect.arrayContaining(['models:read', 'inference:run']),
      active: false,
      expires_at: null,
      activation_checkout_url: premium.activation_checkout_url,
    });
    expect(premium.scopes).toHaveLength(2);
    expect(Object.keys(premium)).toContain('activation_checkout_url');

    const me = await t.request('GET', '/v1/me', { key: free.key });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(account.id);
  });

  it('keys list prints { items } without secrets, and keys revoke ends the key at once', async () => {
    const account = await newAccount();
    const a = await svcJson('keys', 'create', '--account', account.id, '--mode', 'test', '--name', 'a');
    const b = await svcJson('keys', 'create', '--account', account.id, '--mode', 'live', '--name', 'b', '--expires-at', '2099-01-01T00:00:00.000Z');
    const listed = await svcJson('keys', 'list', '--account', account.slug);
    expect(Object.keys(listed)).toEqual(['items']);
    expect(listed.items).toHaveLength(2);
    for (const item of listed.items) {
      expect(item).not.toHaveProperty('key');
      expect(item).not.toHaveProperty('secret_hash');
      expect(JSON.stringify(item)).not.toContain(a.key.slice(12));
      expect(JSON.stringify(item)).not.toContain(b.key.slice(12));
    }
    expect(listed.items.map((k: any) => k.id).sort()).toEqual([a.id, b.id].sort());
    expect(listed.items.find((k: any) => k.id === b.id)).toMatchObject({
      account_id: account.id,
      name: 'b',
      mode: 'live',
      tier: 'free',
      scopes: [],
      active: true,
      expires_at: '2099-01-01T00:00:00.000Z',
      revoked_at: null,
      created_at: expect.stringMatching(ISO),
    });

    expect((await t.request('GET', '/v1/me', { key: a.key })).status).toBe(200);
    expect(await svcJson('keys', 'revoke', a.id)).toEqual({ id: a.id, revoked: true });
    const after = await t.request('GET', '/v1/me', { key: a.key });
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('invalid_key');
    expect((await t.request('GET', '/v1/me', { key: b.key })).status).toBe(200);
    const relisted = await svcJson('keys', 'list', '--account', account.id);
    expect(relisted.items.find((k: any) => k.id === a.id).revoked_at).toEqual(expect.stringMatching(ISO));
  });

  it('credits grant adds up: 5 and 5 make 10, per mode', async () => {
    const account = await newAccount();
    expect(await svcJson('credits', 'grant', '--account', account.id, '--mode', 'test', '--amount', '5')).toEqual({ account: account.id, mode: 'test', credits: 5 });
    expect(await svcJson('credits', 'grant', '--account', account.slug, '--mode', 'test', '--amount', '5')).toEqual({ account: account.id, mode: 'test', credits: 10 });
    expect(await svcJson('credits', 'grant', '--account', account.id, '--mode', 'live', '--amount', '1')).toEqual({ account: account.id, mode: 'live', credits: 1 });
  });

  it('projections status and rebuild --all report every projection and leave the read models as they were', async () => {
    const account = await newAccount();
    const key = await svcJson('keys', 'create', '--account', account.id, '--mode', 'test', '--scopes', 'models:read');
    const names = [...t.app.get(ProjectionRunner).names()].sort();
    expect(names.length).toBeGreaterThan(0);
    const statusItem = {
      name: expect.any(String),
      version: expect.any(Number),
      build: expect.stringMatching(/^[a-z_]+:v\d+/),
      position: expect.any(String),
      behind: expect.any(Boolean),
      lag_seconds: expect.any(Number),
      updated_at: expect.stringMatching(ISO),
      leader: expect.any(String),
      parked: 0,
      error: null,
      stalled_since: null,
      rebuilding: null,
    };

    const status = await svcJson('projections', 'status');
    expect(Object.keys(status)).toEqual(['items', 'subscribers']);
    expect(status.subscribers.map((s: any) => s.name)).toEqual(['subscriber:factory_jobs', 'subscriber:fulfilment', 'subscriber:listing_inspections']);
    expect(status.items.map((i: any) => i.name).sort()).toEqual(names);
    for (const item of status.items) expect(item).toEqual(statusItem);

    const before = {
      me: (await t.request('GET', '/v1/me', { key: key.key })).body,
      keys: (await t.admin('GET', `/admin/keys?account=${account.id}`)).body,
      account: (await t.admin('GET', `/admin/accounts/${account.slug}`)).body,
    };
    const rebuilt = await svcJson('projections', 'rebuild', '--all');
    expect(rebuilt.items.map((i: any) => i.name).sort()).toEqual(names);
    for (const item of rebuilt.items) expect(item).toEqual(statusItem);
    // Each now served by a new build.
    for (const item of rebuilt.items) expect(item.build).not.toBe(status.items.find((i: any) => i.name === item.name).build);

    const me = await t.request('GET', '/v1/me', { key: key.key });
    expect(me.status).toBe(200);
    expect({
      me: me.body,
      keys: (await t.admin('GET', `/admin/keys?account=${account.id}`)).body,
      account: (await t.admin('GET', `/admin/accounts/${account.slug}`)).body,
    }).toEqual(before);
  });

  describe('bad arguments exit non-zero with one line on stderr and create nothing', () => {
    it('an unknown flag exits 2', async () => {
      const stderr = await svcFails(['accounts', 'create', '--name', 'Bogus', '--email', 'bogus@example.com', '--slug', 'cli-bogus', '--bogus'], 2);
      expect(stderr).toContain('--bogus');
      expect(await accountExists('cli-bogus')).toBe(false);
    });

    it('a missing required option exits 2', async () => {
      const stderr = await svcFails(['accounts', 'create', '--name', 'No Email', '--slug', 'cli-no-email'], 2);
      expect(stderr).toContain('--email');
      expect(await accountExists('cli-no-email')).toBe(false);
    });

    it('an unknown command exits 2, named without its options', async () => {
      const stderr = await svcFails(['accounts', 'explode'], 2);
      expect(stderr).toContain('unknown command');
      const res = await svc(['bogus', '--json']);
      expect(res.code).toBe(2);
      expect(JSON.parse(res.stderr)).toEqual({ error: { code: 'usage', message: 'unknown command "bogus"; run "svc --help"' } });
    });

    it('--help lists the commands (as JSON with --json) and COMMAND --help shows one command, running nothing', async () => {
      const all = await svc(['--help', '--json']);
      expect(all.code).toBe(0);
      const { commands } = JSON.parse(all.stdout);
      expect(commands).toEqual(expect.arrayContaining([{ command: 'keys create', usage: expect.stringMatching(/^svc keys create --account /) }]));
      const one = await svc(['accounts', 'create', '--help']);
      expect(one.code).toBe(0);
      expect(one.stdout).toMatch(/^usage: svc accounts create /);
      expect(one.stdout).toContain('--email VALUE (required)');
      expect(one.stdout).toContain('examples:\n  svc accounts create --name "Acme Robotics" --email ops@acme.test');
      expect(JSON.parse((await svc(['keys', 'revoke', '--help', '--json'])).stdout)).toMatchObject({ command: 'keys revoke' });
      // Every command shows at least one example of itself.
      for (const { command } of commands as { command: string }[]) {
        const help = JSON.parse((await svc([...command.split(' '), '--help', '--json'])).stdout);
        expect({ command, examples: help.examples.filter((e: string) => e.includes(`svc ${command} `) || e.endsWith(`svc ${command}`)).length > 0 }).toEqual({ command, examples: true });
      }
    });

    it('a non-integer --amount exits 2 and grants nothing', async () => {
      const account = await newAccount();
      const stderr = await svcFails(['credits', 'grant', '--account', account.id, '--mode', 'test', '--amount', 'abc'], 2);
      expect(stderr).toContain('--amount');
      expect(await svcJson('credits', 'grant', '--account', account.id, '--mode', 'test', '--amount', '1')).toMatchObject({ credits: 1 });
    });

    it('keys create --mode staging exits 1 with validation_failed and creates no key', async () => {
      const account = await newAccount();
      const stderr = await svcFails(['keys', 'create', '--account', account.id, '--mode', 'staging'], 1);
      expect(stderr).toContain('validation_failed');
      expect(stderr).toContain('mode');
      expect(await svcJson('keys', 'list', '--account', account.id)).toEqual({ items: [] });
    });

    it('keys create refuses inference:run on a free key with validation_failed naming the rule, and creates no key', async () => {
      const account = await newAccount();
      const stderr = await svcFails(['keys', 'create', '--account', account.id, '--mode', 'test', '--scopes', 'models:read,inference:run'], 1);
      expect(stderr).toContain('validation_failed');
      expect(stderr).toContain('inference:run is for premium keys only');
      expect(await svcJson('keys', 'list', '--account', account.id)).toEqual({ items: [] });
      // The same scope on a premium key is what it always carries.
      expect((await svcJson('keys', 'create', '--account', account.id, '--mode', 'test', '--tier', 'premium', '--scopes', 'inference:run')).scopes).toEqual(['inference:run']);
    });

    it('with --json the failure on stderr is one JSON error document', async () => {
      const account = await newAccount();
      const res = await svc(['keys', 'create', '--account', account.id, '--mode', 'staging', '--json']);
      expect(res.code).toBe(1);
      expect(res.stdout).toBe('');
      expect(JSON.parse(res.stderr)).toEqual({ error: { code: 'validation_failed', message: expect.stringContaining('mode'), request_id: expect.stringMatching(/^req_/) } });
    });

    it('projections rebuild of an unknown name exits 1 with not_found', async () => {
      const stderr = await svcFails(['projections', 'rebuild', 'nope'], 1);
      expect(stderr).toContain('not_found');
    });

    it('a wrong ADMIN_TOKEN exits 1 and creates nothing', async () => {
      await svcFails(['accounts', 'create', '--name', 'Wrong Token', '--email', 'wrong@example.com', '--slug', 'cli-wrong-token'], 1, 'not-the-token');
      expect(await accountExists('cli-wrong-token')).toBe(false);
    });
  });
});
