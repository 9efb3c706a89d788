import { publishModel } from '../catalog/catalog-client';
import { buy } from '../commerce/commerce-client';
import { ConsoleClient } from '../console/console-client';
import { EVENT_STORE, EventStore, RecordedEvent, START } from '../../src/event-store/event-store';
import { ADMIN_TOKEN, startTestApp, TestApp } from '../support/app';
import { serveForCli, svc } from '../support/cli';

/**
 * Issue 38, section 2 (who did what, and why): named operators with roles, and the actor,
 * request id and reason every command records in its events' metadata, shown by the journal
 * and the console. On PGlite by default; on Postgres with DATABASE_URL; through the
 * EventStoreDB stand-in with TEST_EVENTSTORE=standin (events are read through the port).
 */
describe('named operators, roles and the actor of every command', () => {
  let t: TestApp;
  let restoreEnv: () => void;
  let seller: { accountId: string; key: string; keyId: string };
  let buyer: { accountId: string; key: string; keyId: string };

  beforeAll(async () => {
    t = await startTestApp();
    seller = await t.accountWithKey({ name: 'Seller Co' });
    buyer = await t.accountWithKey({ name: 'Buyer Inc' });
    restoreEnv = await serveForCli(t);
  });
  afterAll(async () => {
    restoreEnv();
    await t.close();
  });

  const as = (token: string, method: string, url: string, body?: unknown) => t.request(method, url, { key: token, body });

  /** Every event of the type, through the event store port (either adapter), oldest first. */
  async function events(type: string): Promise<RecordedEvent[]> {
    const store = t.app.get<EventStore>(EVENT_STORE);
    const found: RecordedEvent[] = [];
    for (let after = START; ; ) {
      const batch = await store.readAll({ after, limit: 1000 });
      found.push(...batch.filter((e) => e.type === type));
      if (batch.length < 1000) return found;
      after = batch[batch.length - 1].position;
    }
  }

  async function createOperator(name: string, role: string): Promise<string> {
    const created = await svc('operators', 'create', name, '--role', role, '--json');
    expect(created.code).toBe(0);
    const body = JSON.parse(created.stdout);
    expect(body).toEqual({ name, role, token: expect.stringMatching(/^op_[A-Za-z0-9]{40}$/), created_at: expect.any(String) });
    return body.token;
  }

  async function purchase(title: string, price = 2000) {
    const model = await publishModel(t, seller.key, { title, price_cents: price });
    const session = await buy(t, buyer.key, model.id);
    const purchases = (await t.request('GET', '/v1/purchases?limit=100', { key: buyer.key })).body.items;
    return purchases.find((p: any) => p.checkout_session_id === session.id);
  }

  it('svc operators create, list and revoke: the token is shown once, stored only as a hash, and a revoked one is 401', async () => {
    const token = await createOperator('alice', 'finance');
    // Only the hash is recorded: neither the event nor the read model holds the token.
    const [created] = await events('OperatorCreated');
    expect(created.data).toEqual({ name: 'alice', role: 'finance', token_hash: expect.stringMatching(/^[0-9a-f]{64}$/), created_at: expect.any(String) });
    expect(JSON.stringify(created)).not.toContain(token);
    expect(created.metadata).toMatchObject({ actor: 'admin', actor_type: 'operator', request_id: expect.any(String) });

    const listed = await svc('operators', 'list', '--json');
    expect(JSON.parse(listed.stdout).items).toEqual([{ name: 'alice', role: 'finance', created_at: created.data.created_at, revoked_at: null }]);
    expect(listed.stdout).not.toContain(created.data.token_hash);

    expect((await as(token, 'GET', '/admin/ledger/trial-balance?mode=test')).status).toBe(200);

    // A name holds one working token: a second create is refused and changes nothing.
    const twice = await svc('operators', 'create', 'alice', '--role', 'admin', '--json');
    expect([twice.code, JSON.parse(twice.stderr).error.code]).toEqual([1, 'operator_exists']);
    expect((await events('OperatorCreated')).length).toBe(1);

    const revoked = await svc('operators', 'revoke', 'alice', '--json');
    expect([revoked.code, JSON.parse(revoked.stdout)]).toEqual([0, { name: 'alice', revoked: true, revoked_at: expect.any(String) }]);
    const refused = await as(token, 'GET', '/admin/ledger/trial-balance?mode=test');
    expect([refused.status, refused.body.error.code, refused.body.error.message]).toEqual([401, 'invalid_admin_token', 'The token of operator "alice" was revoked.']);
    // Revoking again is a no-op with the first revocation's time.
    expect(JSON.parse((await svc('operators', 'revoke', 'alice', '--json')).stdout).revoked_at).toBe(JSON.parse(revoked.stdout).revoked_at);
    expect((await events('OperatorRevoked')).length).toBe(1);
    expect(JSON.parse((await svc('operators', 'list', '--json')).stdout).items[0].revoked_at).toBe(JSON.parse(revoked.stdout).revoked_at);

    // The name can be given a new token; the old one stays revoked.
    const again = await createOperator('alice', 'finance');
    expect((await as(again, 'GET', '/admin/ledger/trial-balance?mode=test')).status).toBe(200);
    expect((await as(token, 'GET', '/admin/ledger/trial-balance?mode=test')).status).toBe(401);
  });

  it('refuses a bad name or role, an unknown operator, and the bootstrap admin, recording nothing', async () => {
    const before = (await events('OperatorCreated')).length;
    const badName = await t.admin('POST', '/admin/operators', { name: 'Bad Name!', role: 'finance' });
    expect([badName.status, badName.body.error.code, badName.body.error.errors[0].field]).toEqual([400, 'validation_failed', 'name']);
    const badRole = await t.admin('POST', '/admin/operators', { name: 'carol', role: 'root' });
    expect([badRole.status, badRole.body.error.errors[0].field]).toEqual([400, 'role']);
    expect((await t.admin('POST', '/admin/operators', { name: 'admin' })).body.error.code).toBe('operator_exists');
    expect((await t.admin('POST', '/admin/operators/nobody/revoke')).status).toBe(404);
    expect((await t.admin('POST', '/admin/operators/admin/revoke')).body.error.code).toBe('bootstrap_operator');
    expect((await events('OperatorCreated')).length).toBe(before);
    // An unknown token of the operator shape is 401 like any other.
    expect((await as(`op_${'x'.repeat(40)}`, 'GET', '/admin/operators')).status).toBe(401);
  });

  it('roles limit tokens: finance cannot rebuild read models, operations cannot refund, only admin manages operators (403 naming the role)', async () => {
    const finance = await createOperator('fiona', 'finance');
    const operations = await createOperator('oscar', 'operations');
    const bought = await purchase('Role-limited');

    const rebuild = await as(finance, 'POST', '/admin/projections/operators/rebuild');
    expect([rebuild.status, rebuild.body.error.code, rebuild.body.error.role_required]).toEqual([403, 'operator_role_forbidden', 'operations']);
    expect(rebuild.body.error.message).toBe('Operator "fiona" has the role finance; this needs the role operations or admin.');

    const refund = await as(operations, 'POST', `/admin/purchases/${bought.id}/refund`, { reason: 'trying' });
    expect([refund.status, refund.body.error.code, refund.body.error.role_required]).toEqual([403, 'operator_role_forbidden', 'finance']);
    expect((await events('RefundRecorded')).some((e) => e.data.purchase_id === bought.id)).toBe(false);

    const operators = await as(finance, 'POST', '/admin/operators', { name: 'mallory', role: 'admin' });
    expect([operators.status, operators.body.error.role_required]).toEqual([403, 'admin']);
    expect((await as(operations, 'GET', '/admin/operators')).status).toBe(403);

    // Each within its role.
    expect((await as(operations, 'GET', '/admin/projections')).status).toBe(200);
    expect((await as(operations, 'GET', `/admin/keys?account=${buyer.accountId}`)).status).toBe(200);
    expect((await as(finance, 'GET', '/admin/disputes?mode=test')).status).toBe(200);
    // The bootstrap ADMIN_TOKEN is the operator admin: everything.
    expect((await t.admin('GET', '/admin/operators')).status).toBe(200);
  });

  it('records the actor and request id of an API key command, and the operator, request id and reason of a refund', async () => {
    const opened = await t.request('POST', '/v1/purchases', { key: buyer.key, body: { asset: (await publishModel(t, seller.key, { title: 'Actor', price_cents: 900 })).id } });
    expect(opened.status).toBe(201);
    const checkout = (await events('CheckoutSessionOpened')).find((e) => e.data.session_id === opened.body.id)!;
    expect(checkout.metadata).toEqual({ actor: buyer.keyId, actor_type: 'api_key', request_id: opened.headers['x-request-id'] });

    const finance = await createOperator('rita', 'finance');
    const bought = await purchase('Refunded with a reason');
    const refund = await as(finance, 'POST', `/admin/purchases/${bought.id}/refund`, { amount_cents: 500, reason: 'ticket 4711: wrong file' });
    expect(refund.status).toBe(200);
    const recorded = (await events('RefundRecorded')).filter((e) => e.data.purchase_id === bought.id);
    expect(recorded.length).toBe(1);
    expect(recorded[0].metadata).toEqual({ actor: 'rita', actor_type: 'operator', request_id: refund.headers['x-request-id'], reason: 'ticket 4711: wrong file' });

    // Through the CLI with the operator's token: --reason is the body's reason.
    process.env.ADMIN_TOKEN = finance;
    try {
      const cli = await svc('purchases', 'refund', bought.id, '--reason', 'ticket 4712: the rest', '--json');
      expect(cli.code).toBe(0);
    } finally {
      process.env.ADMIN_TOKEN = ADMIN_TOKEN;
    }
    const second = (await events('RefundRecorded')).filter((e) => e.data.purchase_id === bought.id)[1];
    expect(second.metadata).toMatchObject({ actor: 'rita', reason: 'ticket 4712: the rest' });
  });

  it('a named operator must give a reason to refund, close a dispute or pause payouts: 400 naming reason, nothing recorded', async () => {
    const finance = await createOperator('nora', 'finance');
    const bought = await purchase('No reason given');
    const refundsBefore = (await events('RefundRecorded')).length;

    for (const [url, body] of [
      [`/admin/purchases/${bought.id}/refund`, {}],
      [`/admin/purchases/${bought.id}/refund`, { reason: '   ' }],
      ['/admin/disputes/dp_none/close', { outcome: 'won' }],
      ['/admin/payouts/pause', { account: seller.accountId, mode: 'test' }],
    ] as const) {
      const res = await as(finance, 'POST', url, body);
      expect([url, res.status, res.body.error.code, res.body.error.errors?.[0]?.field]).toEqual([url, 400, 'validation_failed', 'reason']);
    }
    const tooLong = await as(finance, 'POST', `/admin/purchases/${bought.id}/refund`, { reason: 'x'.repeat(501) });
    expect([tooLong.status, tooLong.body.error.errors[0].field]).toEqual([400, 'reason']);
    expect((await events('RefundRecorded')).length).toBe(refundsBefore);
    expect((await t.request('GET', '/v1/purchases?limit=100', { key: buyer.key })).body.items.find((p: any) => p.id === bought.id).status).toBe('paid');
    expect((await events('PayoutsPaused')).length).toBe(0);

    // With a reason: the pause records it.
    const paused = await as(finance, 'POST', '/admin/payouts/pause', { account: seller.accountId, mode: 'test', reason: 'KYC review' });
    expect(paused.status).toBe(200);
    expect((await events('PayoutsPaused'))[0].metadata).toMatchObject({ actor: 'nora', reason: 'KYC review' });
    expect((await t.admin('POST', '/admin/payouts/resume', { account: seller.accountId, mode: 'test' })).status).toBe(200);

    // The bootstrap operator (automation) may leave it out; its events name it.
    expect((await t.admin('POST', `/admin/purchases/${bought.id}/refund`, {})).status).toBe(200);
    const [refund] = (await events('RefundRecorded')).filter((e) => e.data.purchase_id === bought.id);
    expect(refund.metadata).toEqual({ actor: 'admin', actor_type: 'operator', request_id: expect.any(String) });
  });

  it('svc ledger journal shows the actor and reason of each posting (CSV and JSONL); events without one show null', async () => {
    const finance = await createOperator('jules', 'finance');
    const bought = await purchase('Journal actor', 1000);
    expect((await as(finance, 'POST', `/admin/purchases/${bought.id}/refund`, { reason: 'chargeback avoided' })).status).toBe(200);

    const jsonl = await svc('ledger', 'journal', '--mode', 'test', '--format', 'jsonl');
    expect(jsonl.code).toBe(0);
    const postings = jsonl.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((p) => p.reference === bought.id);
    const refunds = postings.filter((p) => p.event_type === 'RefundRecorded');
    expect(refunds.length).toBeGreaterThan(0);
    for (const p of refunds) expect([p.actor, p.actor_type, p.reason]).toEqual(['jules', 'operator', 'chargeback avoided']);
    // The sale was recorded by the hosted payment page, which no key or operator signs.
    for (const p of postings.filter((p) => p.event_type === 'SaleRecorded')) expect([p.actor, p.reason]).toEqual([null, null]);

    const csv = await svc('ledger', 'journal', '--mode', 'test');
    const [header, ...rows] = csv.stdout.split('\n');
    expect(header.split(',').slice(-2)).toEqual(['actor', 'reason']);
    expect(rows.filter((r) => r.includes(bought.id) && r.includes('RefundRecorded')).every((r) => r.endsWith(',jules,chargeback avoided'))).toBe(true);
  });

  it('the console signs an operator in with their token: their name shown, pages of their role only, their actions recorded as theirs, revocation ends the session', async () => {
    const token = await createOperator('opal', 'operations');
    const browser = new ConsoleClient(t, '10.0.8.1');
    expect((await browser.signIn('operator', token)).status).toBe(303);
    const overview = await browser.get('/console/overview');
    expect(overview.status).toBe(200);
    expect(overview.text).toContain('data-operator="opal"');
    expect(overview.text).not.toContain('href="/console/ledger"');
    expect((await browser.get('/console/ledger')).status).toBe(403);
    const readModels = await browser.get('/console/read-models');
    expect(readModels.status).toBe(200);

    // Revoking a key from the console: the event names opal.
    const victim = await t.accountWithKey();
    const accounts = await browser.get(`/console/accounts?q=${victim.accountId}`);
    expect((await browser.post(`/console/keys/${victim.keyId}/revoke`, { _csrf: ConsoleClient.csrfOf(accounts.text) })).status).toBe(303);
    const revoked = (await events('ApiKeyRevoked')).find((e) => e.data.key_id === victim.keyId)!;
    expect(revoked.metadata).toMatchObject({ actor: 'opal', actor_type: 'operator' });
    // Granting credits is admin's: refused, nothing granted.
    const grant = await browser.post(`/console/accounts/${victim.accountId}/credits`, { amount: '5', _csrf: ConsoleClient.csrfOf(accounts.text) });
    expect([grant.status, grant.text]).toEqual([403, expect.stringContaining('needs the operator role admin')]);

    // The event log and the event page show who did it.
    const event = await browser.get(`/console/events/${revoked.id}?stream=${encodeURIComponent(revoked.streamId)}&revision=${revoked.revision}`);
    expect(event.text).toMatch(/<dd data-actor><span data-actor-type="operator">opal<\/span><\/dd>/);
    expect((await browser.get('/console/events')).text).toContain('<span data-actor-type="operator">opal</span>');

    expect((await svc('operators', 'revoke', 'opal')).code).toBe(0);
    expect((await browser.get('/console/overview')).headers.location).toBe('/console/sign-in?notice=session-ended');
    const again = await new ConsoleClient(t, '10.0.8.2').signIn('operator', token);
    expect([again.status, again.text]).toEqual([401, expect.stringContaining('The token of operator &quot;opal&quot; was revoked.')]);
  });

  it('the console purchase section shows who refunded and why', async () => {
    const finance = await createOperator('pia', 'finance');
    const bought = await purchase('Console purchase');
    expect((await as(finance, 'POST', `/admin/purchases/${bought.id}/refund`, { reason: 'duplicate order' })).status).toBe(200);
    const refund = (await events('RefundRecorded')).find((e) => e.data.purchase_id === bought.id)!;
    const browser = new ConsoleClient(t, '10.0.8.3');
    expect((await browser.signIn('operator', finance)).status).toBe(303);
    const page = await browser.get(`/console/events/${refund.id}?stream=${encodeURIComponent(refund.streamId)}&revision=${refund.revision}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`data-purchase="${bought.id}"`);
    expect(page.text).toMatch(/<td><span data-actor-type="operator">pia<\/span><\/td><td>duplicate order<\/td>/);
    expect(page.text).toContain('<dd data-reason>duplicate order</dd>');
  });
});
