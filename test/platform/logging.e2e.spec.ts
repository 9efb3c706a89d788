import { Writable } from 'node:stream';
import { publishModel } from '../catalog/catalog-client';
import { payOnPage, PAYS } from '../commerce/commerce-client';
import { startTestApp, TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { createEndpoint } from '../webhooks/helpers';

/** Issue 15: JSON logs (pino), one line per request, and never a key or a signing secret. */
describe('structured request logs', () => {
  let t: TestApp;
  const lines: string[] = [];
  const records = () => lines.map((line) => JSON.parse(line));
  beforeAll(async () => {
    const capture = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    t = await startTestApp({ logDestination: capture, env: { LOG_LEVEL: 'info' } });
  });
  afterAll(() => t.close());

  it('writes one JSON line per request with its id, route, status, duration and account, and no secret', async () => {
    const { key, accountId } = await t.accountWithKey({ tier: 'premium' });
    const fake = `svc_test_${'x'.repeat(40)}`;
    const me = await t.request('GET', '/v1/me', { key });
    const refused = await t.request('GET', '/v1/me', { key: fake });
    const missing = await t.request('GET', '/v1/listings/lst_nothere', { key });
    const endpoint = await createEndpoint(t, key, 'http://127.0.0.1:9/hooks', ['listing.published']);
    expect(endpoint.secret).toMatch(/^whsec_/);
    await publishModel(t, key, { title: 'Logged Policy', price_cents: 900 });

    await eventually(() => records().some((r) => r.request_id === missing.headers['x-request-id']));
    const line = (id: unknown) => records().filter((r) => r.msg === 'request' && r.request_id === id);
    expect(line(me.headers['x-request-id'])).toEqual([
      expect.objectContaining({ level: 30, method: 'GET', route: '/v1/me', status: 200, account_id: accountId, mode: 'test', duration_ms: expect.any(Number) }),
    ]);
    expect(line(refused.headers['x-request-id'])).toEqual([expect.objectContaining({ route: '/v1/me', status: 401, account_id: null })]);
    expect(line(missing.headers['x-request-id'])).toEqual([expect.objectContaining({ route: '/v1/listings/:idOrSlug', status: 404 })]);

    const log = lines.join('\n');
    expect(log).not.toContain(key);
    expect(log).not.toContain(fake);
    expect(log).not.toMatch(/svc_(test|live)_[A-Za-z0-9]{40}/);
    expect(log).not.toContain(endpoint.secret);
    expect(log).not.toMatch(/whsec_/);
    expect(log).not.toMatch(/authorization/i);
  });

  it('keeps a client-sent x-request-id in the response and the log line', async () => {
    const { key } = await t.accountWithKey();
    const res = await t.request('GET', '/v1/me', { key, headers: { 'x-request-id': 'client-trace-42' } });
    expect(res.headers['x-request-id']).toBe('client-trace-42');
    await eventually(() => records().some((r) => r.request_id === 'client-trace-42'));
  });

  it('puts the request id on records written while the request is handled', async () => {
    const { accountId } = await t.accountWithKey({ tier: 'premium' });
    const created = await t.admin('POST', '/admin/keys', { account: accountId, mode: 'live', tier: 'premium' });
    expect((await payOnPage(t, created.body.activation_checkout_url, PAYS)).status).toBe(200);
    // Live inference without an upstream: the error filter logs the 503 inside the request.
    const res = await t.request('POST', '/v1/chat/completions', { key: created.body.key, body: { model: 'svc-fast-8b', messages: [{ role: 'user', content: 'hi' }] } });
    expect(res.status).toBe(503);
    const id = res.headers['x-request-id'];
    const inside = await eventually(() => records().find((r) => r.msg !== 'request' && r.msg !== 'request failed' && r.request_id === id));
    expect(inside).toMatchObject({ level: 50, context: 'HTTP', request_id: id, msg: expect.stringContaining('Live inference is not configured') });
    // Outside any request, no id.
    expect(records().filter((r) => r.context === 'NestApplication' || r.msg === 'Nest application successfully started').every((r) => r.request_id === undefined)).toBe(true);
  });
});
