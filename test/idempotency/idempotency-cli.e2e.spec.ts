import { publishModel } from '../catalog/catalog-client';
import { buy, eventsOfType } from '../commerce/commerce-client';
import { startTestApp } from '../support/app';
import { serveForCli, svc } from '../support/cli';
import { ENCRYPTION_KEY } from '../webhooks/helpers';

/** The CLI's global --idempotency-key: a command run again under the same key does nothing twice. */
describe('svc --idempotency-key', () => {
  let t: Awaited<ReturnType<typeof startTestApp>>;
  let restoreEnv: () => void;

  beforeAll(async () => {
    t = await startTestApp({ env: { WEBHOOK_ENCRYPTION_KEY: ENCRYPTION_KEY } });
    restoreEnv = await serveForCli(t);
  });
  afterAll(async () => {
    restoreEnv();
    await t.close();
  });

  it('runs a refund once: the same command again under the key prints the same result, where without it the second says already_refunded', async () => {
    const seller = await t.accountWithKey({ name: 'CLI seller' });
    const buyer = await t.accountWithKey({ scopes: ['models:read'] });
    const model = await publishModel(t, seller.key, { title: 'CLI refund', price_cents: 1800 });
    const session = await buy(t, buyer.key, model.id);
    const purchase = (await t.request('GET', '/v1/purchases?limit=100', { key: buyer.key })).body.items.find((p: any) => p.checkout_session_id === session.id);

    const first = await svc('purchases', 'refund', purchase.id, '--json', '--idempotency-key', 'cli-refund-1');
    const again = await svc('--idempotency-key=cli-refund-1', 'purchases', 'refund', purchase.id, '--json');
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout).status).toBe('refunded');
    expect(again).toEqual(first);
    expect((await eventsOfType(t, 'RefundRecorded')).filter((e) => e.data.purchase_id === purchase.id)).toHaveLength(1);

    const unkeyed = await svc('purchases', 'refund', purchase.id);
    expect(unkeyed.code).toBe(1);
    expect(unkeyed.stderr).toMatch(/^svc: already_refunded: /);
  });

  it('creates one account for `svc accounts create` run twice under one key', async () => {
    const run = () => svc('accounts', 'create', '--name', 'Keyed Co', '--email', 'keyed@example.com', '--json', '--idempotency-key', 'cli-account-1');
    const first = await run();
    const again = await run();
    expect(first.code).toBe(0);
    expect(again.stdout).toBe(first.stdout);
    const created = (await eventsOfType(t, 'AccountCreated')).filter((e) => e.data.email === 'keyed@example.com');
    expect(created).toHaveLength(1);
  });

  it('refuses the option without a value, over 255 characters, or on a command that does not call the service', async () => {
    const create = ['accounts', 'create', '--name', 'Never Co', '--email', 'never@example.com'];
    expect(await svc(...create, '--idempotency-key')).toMatchObject({ code: 2, stderr: 'svc: --idempotency-key needs a value (1 to 255 characters)\n' });
    expect(await svc(...create, '--idempotency-key', 'k'.repeat(256))).toMatchObject({ code: 2, stderr: 'svc: --idempotency-key is at most 255 characters, got 256\n' });
    expect(await svc('events', 'copy', '--to', 'esdb://127.0.0.1:1?tls=false', '--idempotency-key', 'k')).toMatchObject({
      code: 2,
      stderr: 'svc: --idempotency-key applies to commands that call the service\n',
    });
    expect((await eventsOfType(t, 'AccountCreated')).filter((e) => e.data.email === 'never@example.com')).toHaveLength(0);
    expect((await svc('--help')).stdout).toContain('--idempotency-key KEY');
  });
});
