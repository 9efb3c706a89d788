import { svc, serveForCli } from '../support/cli';
import { startTestApp, TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { verifyWebhook } from '../../src/webhooks/verify-signature';
import { createEndpoint, deliveries, emit, ENCRYPTION_KEY, evtId, payoutPaid } from './helpers';
import { Received, startReceiver } from './receiver';

const V1 = /^t=\d+,v1=[0-9a-f]{64}$/;
const TWO_V1 = /^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The delivery as a receiver checks it, with this project's verifier; throws when it does not verify. */
const verify = (got: Received, secret: string) => verifyWebhook(got.body, got.headers['svc-signature'], secret);

describe('webhook tools: rotate_secret, test events, retries (issue 24)', () => {
  let t: TestApp;
  const receivers: { close(): Promise<void> }[] = [];
  const receiver = async (...args: Parameters<typeof startReceiver>) => {
    const r = await startReceiver(...args);
    receivers.push(r);
    return r;
  };
  // Two attempts a second apart; a generous timeout, as in delivery.e2e (PGlite shares this thread).
  beforeAll(async () => {
    t = await startTestApp({ env: { WEBHOOK_RETRY_SCHEDULE: '0,1', WEBHOOK_TIMEOUT_MS: '5000', WEBHOOK_ENCRYPTION_KEY: ENCRYPTION_KEY } });
  });
  afterAll(async () => {
    await t.close();
    for (const r of receivers) await r.close();
  });

  const rotate = (key: string, id: string, body?: unknown) => t.request('POST', `/v1/webhook_endpoints/${id}/rotate_secret`, { key, body });
  const retry = (key: string, endpointId: string, deliveryId: string) => t.request('POST', `/v1/webhook_endpoints/${endpointId}/deliveries/${deliveryId}/retry`, { key });
  const sendTest = (key: string, id: string) => t.request('POST', `/v1/webhook_endpoints/${id}/test`, { key });
  const settled = (key: string, endpointId: string, n = 1) =>
    eventually(async () => {
      const log = await deliveries(t, key, endpointId);
      return log.length >= n && log.every((d) => d.status !== 'pending') && log;
    }, 20000, 'deliveries to settle');
  const expectNotFound = (res: { status: number; body: any }) => expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 404, code: 'not_found' });

  describe('POST /v1/webhook_endpoints/{id}/rotate_secret', () => {
    it('answers the new secret once; deliveries then verify with the new and the old secret until the old one expires', async () => {
      const r = await receiver();
      const { accountId, key } = await t.accountWithKey({ mode: 'test' });
      const ep = await createEndpoint(t, key, r.url, ['payout.paid']);

      const before = Date.now();
      const res = await rotate(key, ep.id, { expires_in: 2 });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: ep.id, object: 'webhook_endpoint', enabled: true, secret: expect.stringMatching(/^whsec_test_[A-Za-z0-9]{32}$/) });
      const rotated: string = res.body.secret;
      expect(rotated).not.toBe(ep.secret);
      const expiresAt = Date.parse(res.body.previous_secret_expires_at);
      expect(expiresAt - before).toBeGreaterThanOrEqual(1900);
      expect(expiresAt - before).toBeLessThan(60_000);
      // Shown once: neither the endpoint nor the log shows it again.
      const got = await t.request('GET', `/v1/webhook_endpoints/${ep.id}`, { key });
      expect(got.body.secret).toBeUndefined();
      expect(got.body.previous_secret_expires_at).toBeUndefined();

      const first = await emit(t, 'PayoutPaid', payoutPaid(accountId, 'test'));
      await settled(key, ep.id);
      const [during] = r.received;
      expect(during.headers['svc-signature']).toMatch(TWO_V1);
      expect(verify(during, rotated).id).toBe(evtId(first.id));
      expect(verify(during, ep.secret).id).toBe(evtId(first.id));
      expect(() => verify(during, 'whsec_test_wrong')).toThrow(/no v1/);

      // Past its expiry the old secret no longer signs.
      await sleep(Math.max(0, expiresAt - Date.now()) + 200);
      const second = await emit(t, 'PayoutPaid', payoutPaid(accountId, 'test'));
      await settled(key, ep.id, 2);
      const after = r.received[1];
      expect(after.headers['svc-signature']).toMatch(V1);
      expect(verify(after, rotated).id).toBe(evtId(second.id));
      expect(() => verify(after, ep.secret)).toThrow(/no v1/);
    });

    it('expires_in 0 stops the old secret at once; a second rotation keeps only the secret it replaces', async () => {
      const r = await receiver();
      const { accountId, key } = await t.accountWithKey({ mode: 'test' });
      const ep = await createEndpoint(t, key, r.url, ['payout.paid']);
      const second = (await rotate(key, ep.id, { expires_in: 3600 })).body.secret;
      const now = await rotate(key, ep.id, { expires_in: 0 });
      expect(now.status).toBe(200);
      expect(now.body.previous_secret_expires_at).toBeNull();
      await emit(t, 'PayoutPaid', payoutPaid(accountId, 'test'));
      await settled(key, ep.id);
      const [got] = r.received;
      expect(got.headers['svc-signature']).toMatch(V1);
      expect(verify(got, now.body.secret).type).toBe('payout.paid');
      expect(() => verify(got, second)).toThrow(/no v1/);
      expect(() => verify(got, ep.secret)).toThrow(/no v1/);
    });

    it('defaults expires_in to 24 hours (no body, or an empty one) and takes 0 and 7 days', async () => {
      const { key } = await t.accountWithKey({ mode: 'test' });
      const ep = await createEndpoint(t, key, 'http://localhost:4242/hooks', ['payout.paid']);
      const day = 86_400_000;
      for (const body of [undefined, {}, { expires_in: null }]) {
        const res = await rotate(key, ep.id, body);
        expect({ body, status: res.status }).toEqual({ body, status: 200 });
        expect(Math.abs(Date.parse(res.body.previous_secret_expires_at) - Date.now() - day)).toBeLessThan(60_000);
      }
      const week = await rotate(key, ep.id, { expires_in: 604800 });
      expect(week.status).toBe(200);
      expect(Math.abs(Date.parse(week.body.previous_secret_expires_at) - Date.now() - 7 * day)).toBeLessThan(60_000);
      expect((await rotate(key, ep.id, { expires_in: 0 })).status).toBe(200);
    });

    it('refuses an expires_in out of 0..604800 or not an integer: 400 naming the field, nothing rotated', async () => {
      const r = await receiver();
      const { accountId, key } = await t.accountWithKey({ mode: 'test' });
      const ep = await createEndpoint(t, key, r.url, ['payout.paid']);
      for (const expires_in of [-1, 604801, 1.5, '60', true, [60], 1e30]) {
        const res = await rotate(key, ep.id, { expires_in });
        expect({ expires_in, status: res.status, code: res.body.error?.code }).toEqual({ expires_in, status: 400, code: 'validation_failed' });
        expect(res.body.error.message).toContain('"expires_in"');
      }
      // Still the creation's secret alone.
      await emit(t, 'PayoutPaid', payoutPaid(accountId, 'test'));
      await settled(key, ep.id);
      expect(r.received[0].headers['svc-signature']).toMatch(V1);
      expect(verify(r.received[0], ep.secret).type).toBe('payout.paid');
    });

    it("404 for a deleted endpoint, another account's, another mode's and ids that name nothing", async () => {
      const { accountId, key } = await t.accountWithKey({ mode: 'test' });
      const other = await t.accountWithKey({ mode: 'test' });
      const live = await t.admin('POST', '/admin/keys', { account: accountId, mode: 'live' });
      const ep = await createEndpoint(t, key, 'http://localhost:4242/hooks', ['payout.paid']);
      expectNotFound(await rotate(other.key, ep.id));
      expectNotFound(await rotate(live.body.key, ep.id));
      for (const id of ['we_nope', 'not-an-id', '%E2%9C%93', 'x'.repeat(100)]) expectNotFound(await rotate(key, id));
      expect((await t.request('DELETE', `/v1/webhook_endpoints/${ep.id}`, { key })).status).toBe(200);
      expectNotFound(await rotate(key, ep.id));
    });
  });

  describe('POST /v1/webhook_endpoints/{id}/test', () => {
    it('sends a signed webhook.test to that endpoint only, whatever its events filter, and logs it', async () => {
      const r = await receiver();
      const bystander = await receiver();
      const { key } = await t.accountWithKey({ mode: 'test' });
      const ep = await createEndpoint(t, key, r.url, ['listing.purchased']);
      const sibling = await createEndpoint(t, key, bystander.url, ['listing.purchased', 'payout.paid']);

      const res = await sendTest(key, ep.id);
      expect(res.status).toBe(202);
      expect(res.body).toEqual({
        object: 'webhook_test',
        endpoint_id: ep.id,
        event_id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
        event_type: 'webhook.test',
        delivery_id: expect.stringMatching(/^whd_/),
      });
      const [entry] = await settled(key, ep.id);
      expect(entry).toMatchObject({ id: res.body.delivery_id, event_id: res.body.event_id, event_type: 'webhook.test', status: 'succeeded', attempts: 1, response_status: 204 });
      expect(r.received).toHaveLength(1);
      const event = verify(r.received[0], ep.secret);
      expect(event).toEqual({ id: res.body.event_id, type: 'webhook.test', created: expect.any(Number), data: { endpoint: { id: ep.id } } });
      expect(Math.abs(event.created - Date.now() / 1000)).toBeLessThan(300);
      expect(bystander.received).toHaveLength(0);
      expect(await deliveries(t, key, sibling.id)).toEqual([]);
    });

    it("400 invalid_request for a disabled endpoint; 404 for a deleted one, another account's and unknown ids", async () => {
      const { key } = await t.accountWithKey({ mode: 'test' });
      const other = await t.accountWithKey({ mode: 'test' });
      const ep = await createEndpoint(t, key, 'http://localhost:4242/hooks', ['payout.paid']);
      await t.request('PATCH', `/v1/webhook_endpoints/${ep.id}`, { key, body: { enabled: false } });
      const paused = await sendTest(key, ep.id);
      expect({ status: paused.status, code: paused.body.error.code }).toEqual({ status: 400, code: 'invalid_request' });
      expectNotFound(await sendTest(other.key, ep.id));
      expectNotFound(await sendTest(key, 'we_nope'));
      await t.request('DELETE', `/v1/webhook_endpoints/${ep.id}`, { key });
      expectNotFound(await sendTest(key, ep.id));
      expect(await t.db.query('SELECT 1 FROM webhook_deliveries WHERE endpoint_id = $1', [ep.id])).toMatchObject({ rows: [] });
    });
  });

  describe('POST /v1/webhook_endpoints/{id}/deliveries/{delivery_id}/retry', () => {
    it('gives a failed delivery another attempt now, signed, its earlier attempts kept', async () => {
      let answer = 500;
      const r = await receiver(() => answer);
      const { accountId, key } = await t.accountWithKey({ mode: 'test' });
      const ep = await createEndpoint(t, key, r.url, ['payout.paid']);
      const { id } = await emit(t, 'PayoutPaid', payoutPaid(accountId, 'test'));
      const [failed] = await settled(key, ep.id);
      expect(failed).toMatchObject({ status: 'failed', attempts: 2, response_status: 500, next_attempt_at: null });

      answer = 204;
      const res = await retry(key, ep.id, failed.id);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: failed.id, object: 'webhook_delivery', status: 'pending', attempts: 2, event_id: evtId(id) });
      expect(Date.parse(res.body.next_attempt_at)).toBeLessThanOrEqual(Date.now() + 1000);

      const [done] = await settled(key, ep.id);
      expect(done).toMatchObject({ id: failed.id, status: 'succeeded', attempts: 3, response_status: 204, error: null, next_attempt_at: null });
      expect(r.received).toHaveLength(3);
      expect(verify(r.received[2], ep.secret).id).toBe(evtId(id));
      expect(r.received[2].body).toBe(r.received[0].body);
      const attempts = await t.db.query('SELECT attempt, response_status FROM webhook_delivery_attempts WHERE delivery_id = $1 ORDER BY attempt', [failed.id]);
      expect(attempts.rows).toEqual([
        { attempt: 1, response_status: 500 },
        { attempt: 2, response_status: 500 },
        { attempt: 3, response_status: 204 },
      ]);
    });

    it('a failed retry is one attempt: the delivery is failed again, not put back on the schedule', async () => {
      const r = await receiver(() => 500);
      const { accountId, key } = await t.accountWithKey({ mode: 'test' });
      const ep = await createEndpoint(t, key, r.url, ['payout.paid']);
      await emit(t, 'PayoutPaid', payoutPaid(accountId, 'test'));
      const [failed] = await settled(key, ep.id);
      expect((await retry(key, ep.id, failed.id)).status).toBe(200);
      await eventually(() => r.received.length === 3, 15000, 'the retried attempt');
      const [after] = await settled(key, ep.id);
      expect(after).toMatchObject({ status: 'failed', attempts: 3, response_status: 500, next_attempt_at: null });
    });

    it('resends a delivery that succeeded; the test event too', async () => {
      const r = await receiver();
      const { key } = await t.accountWithKey({ mode: 'test' });
      const ep = await createEndpoint(t, key, r.url, ['payout.paid']);
      const test = (await sendTest(key, ep.id)).body;
      await settled(key, ep.id);
      expect((await retry(key, ep.id, test.delivery_id)).status).toBe(200);
      await eventually(() => r.received.length === 2, 15000, 'the resent test event');
      expect(verify(r.received[1], ep.secret)).toMatchObject({ id: test.event_id, type: 'webhook.test' });
      expect((await settled(key, ep.id))[0]).toMatchObject({ status: 'succeeded', attempts: 2 });
    });

    it('409 conflict while the delivery is pending (its attempt under way)', async () => {
      const r = await receiver(() => 'hang');
      const { accountId, key } = await t.accountWithKey({ mode: 'test' });
      const ep = await createEndpoint(t, key, r.url, ['payout.paid']);
      await emit(t, 'PayoutPaid', payoutPaid(accountId, 'test'));
      await eventually(() => r.received.length === 1, 15000, 'the first attempt');
      const [pending] = await deliveries(t, key, ep.id);
      expect(pending.status).toBe('pending');
      const res = await retry(key, ep.id, pending.id);
      expect({ status: res.status, code: res.body.error.code }).toEqual({ status: 409, code: 'conflict' });
      expect(res.body.error.message).toMatch(/pending/);
    });

    it("404 for another account's delivery or endpoint, a delivery of another endpoint, unknown ids; 400 on a disabled endpoint", async () => {
      const r = await receiver();
      const a = await t.accountWithKey({ mode: 'test' });
      const b = await t.accountWithKey({ mode: 'test' });
      const epA = await createEndpoint(t, a.key, r.url, ['payout.paid']);
      const epA2 = await createEndpoint(t, a.key, 'http://localhost:4242/hooks', ['listing.published']);
      const epB = await createEndpoint(t, b.key, r.url, ['payout.paid']);
      await emit(t, 'PayoutPaid', payoutPaid(a.accountId, 'test'));
      await emit(t, 'PayoutPaid', payoutPaid(b.accountId, 'test'));
      const [ofA] = await settled(a.key, epA.id);
      const [ofB] = await settled(b.key, epB.id);

      expectNotFound(await retry(a.key, epA.id, ofB.id));
      expectNotFound(await retry(a.key, epB.id, ofB.id));
      expectNotFound(await retry(b.key, epA.id, ofA.id));
      expectNotFound(await retry(a.key, epA2.id, ofA.id));
      expectNotFound(await retry(a.key, epA.id, 'whd_nope'));
      expectNotFound(await retry(a.key, 'we_nope', ofA.id));
      expectNotFound(await retry(a.key, epA.id, '%E2%9C%93'));

      await t.request('PATCH', `/v1/webhook_endpoints/${epA.id}`, { key: a.key, body: { enabled: false } });
      const paused = await retry(a.key, epA.id, ofA.id);
      expect({ status: paused.status, code: paused.body.error.code }).toEqual({ status: 400, code: 'invalid_request' });
      expectNotFound(await retry(a.key, epA.id, 'whd_nope'));
      expect((await deliveries(t, a.key, epA.id))[0].status).toBe('succeeded');

      await t.request('DELETE', `/v1/webhook_endpoints/${epA.id}`, { key: a.key });
      expectNotFound(await retry(a.key, epA.id, ofA.id));
    });
  });

  describe('svc webhooks rotate and svc webhooks resend (operator API)', () => {
    let restore: () => void;
    beforeAll(async () => {
      restore = await serveForCli(t);
    });
    afterAll(() => restore());

    it('rotate prints the new secret; deliveries carry both signatures; --expires-in 0 drops the old one', async () => {
      const r = await receiver();
      const { accountId, key } = await t.accountWithKey({ mode: 'test' });
      const ep = await createEndpoint(t, key, r.url, ['payout.paid']);

      const text = await svc('webhooks', 'rotate', ep.id);
      expect(text).toMatchObject({ code: 0, stderr: '' });
      const secret = /new signing secret of we_\w+: (whsec_test_\w+)/.exec(text.stdout)![1];
      expect(text.stdout).toMatch(/the old secret signs too until \d{4}-/);
      await emit(t, 'PayoutPaid', payoutPaid(accountId, 'test'));
      await settled(key, ep.id);
      expect(verify(r.received[0], secret).type).toBe('payout.paid');
      expect(verify(r.received[0], ep.secret).type).toBe('payout.paid');

      const json = await svc('webhooks', 'rotate', ep.id, '--expires-in', '0', '--json');
      expect(json.code).toBe(0);
      const rotated = JSON.parse(json.stdout);
      expect(rotated).toMatchObject({ id: ep.id, secret: expect.stringMatching(/^whsec_test_/), previous_secret_expires_at: null });

      const bad = await svc('webhooks', 'rotate', ep.id, '--expires-in', 'soon');
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--expires-in');
      const tooLong = await svc('webhooks', 'rotate', ep.id, '--expires-in', '604801');
      expect(tooLong.code).toBe(1);
      expect(tooLong.stderr).toContain('expires_in');
      const unknown = await svc('webhooks', 'rotate', 'we_nope', '--json');
      expect(unknown.code).toBe(1);
      expect(JSON.parse(unknown.stderr).error.code).toBe('not_found');
    });

    it('resend gives a delivery another attempt by its id alone', async () => {
      let answer = 500;
      const r = await receiver(() => answer);
      const { accountId, key } = await t.accountWithKey({ mode: 'test' });
      const ep = await createEndpoint(t, key, r.url, ['payout.paid']);
      const { id } = await emit(t, 'PayoutPaid', payoutPaid(accountId, 'test'));
      const [failed] = await settled(key, ep.id);
      expect(failed.status).toBe('failed');

      answer = 204;
      const res = await svc('webhooks', 'resend', failed.id);
      expect(res).toMatchObject({ code: 0, stderr: '' });
      expect(res.stdout).toContain(`${failed.id} (payout.paid [${evtId(id)}]) is queued for another attempt now`);
      const [done] = await settled(key, ep.id);
      expect(done).toMatchObject({ status: 'succeeded', attempts: 3 });
      expect(verify(r.received[2], ep.secret).id).toBe(evtId(id));

      const unknown = await svc('webhooks', 'resend', 'whd_nope', '--json');
      expect(unknown.code).toBe(1);
      expect(JSON.parse(unknown.stderr).error.code).toBe('not_found');
      const missing = await svc('webhooks', 'resend');
      expect(missing.code).toBe(2);
    });
  });
});

describe('retrying a pending delivery that waits for its next attempt (issue 43)', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<typeof startReceiver>>;
  // The second attempt an hour after the first: a failing delivery waits, pending, unless retried.
  beforeAll(async () => {
    t = await startTestApp({ env: { WEBHOOK_RETRY_SCHEDULE: '0,3600', WEBHOOK_TIMEOUT_MS: '5000', WEBHOOK_ENCRYPTION_KEY: ENCRYPTION_KEY } });
    r = await startReceiver((_got, n) => (n === 1 ? 500 : 204));
  });
  afterAll(async () => {
    await t.close();
    await r.close();
  });

  it('is sent at once, and its schedule is not used up by it', async () => {
    const { accountId, key } = await t.accountWithKey({ mode: 'test' });
    const ep = await createEndpoint(t, key, r.url, ['payout.paid']);
    await emit(t, 'PayoutPaid', payoutPaid(accountId, 'test'));
    const [waiting] = await eventually(async () => {
      const log = await deliveries(t, key, ep.id);
      return log[0]?.status === 'pending' && log[0].attempts === 1 && Date.parse(log[0].next_attempt_at) > Date.now() + 3_000_000 && log;
    }, 20000, 'the first attempt to fail and the next to wait an hour');
    const res = await t.request('POST', `/v1/webhook_endpoints/${ep.id}/deliveries/${waiting.id}/retry`, { key });
    expect(res.status).toBe(200);
    await eventually(() => r.received.length === 2, 15000, 'the retried attempt');
    const [done] = await eventually(async () => {
      const log = await deliveries(t, key, ep.id);
      return log[0]?.status === 'succeeded' && log;
    }, 15000, 'the delivery to succeed');
    expect(done).toMatchObject({ id: waiting.id, attempts: 2 });
    expect(r.received[1].body).toBe(r.received[0].body);
  });
});
