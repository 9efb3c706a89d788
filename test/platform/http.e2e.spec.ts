import { modelBody, modelBytes, upload } from '../catalog/catalog-client';
import { openCheckout, pathOf, PAYS } from '../commerce/commerce-client';
import { ADMIN_TOKEN, Response, startTestApp, TestApp } from '../support/app';

/** The error envelope of spec part 7, with the request id in the body and the header. */
function expectError(res: Response, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body?.error?.code).toBe(code);
  expect(typeof res.body.error.message).toBe('string');
  expect(res.body.error.request_id).toEqual(expect.any(String));
  expect(res.body.error.request_id).toBe(res.headers['x-request-id']);
}

const adminHeaders = (extra: Record<string, string> = {}) => ({ authorization: `Bearer ${ADMIN_TOKEN}`, ...extra });

describe('HTTP behaviour shared by every route', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { BODY_LIMIT_BYTES: '2048', CANONICAL_HOST: 'www.example.com' } });
  });
  afterAll(() => t.close());

  const postAccount = (payload: string, headers: Record<string, string> = {}) =>
    t.request('POST', '/admin/accounts', { payload, headers: adminHeaders({ 'content-type': 'application/json', ...headers }) });

  const accountExists = async (slug: string) => {
    const res = await t.admin('GET', `/admin/accounts/${slug}`);
    if (res.status === 404) return false;
    expect(res.status).toBe(200);
    return true;
  };

  describe('request bodies', () => {
    it('a well-formed body creates the account (the control for the cases below)', async () => {
      const res = await postAccount(JSON.stringify({ name: 'Good', email: 'good@example.com', slug: 'http-good' }));
      expect(res.status).toBe(201);
      expect(await accountExists('http-good')).toBe(true);
    });

    // Errors raised while Fastify reads the body, before a Nest handler runs.
    const bodyCases: [string, string, Record<string, string>, number, string][] = [
      ['unparseable JSON', '{"name": "Broken", "email": "b@example.com", "slug": "http-broken"', {}, 400, 'invalid_request'],
      ['a JSON array', JSON.stringify([{ name: 'Array', email: 'a@example.com', slug: 'http-array' }]), {}, 400, 'invalid_request'],
      ['a JSON string', JSON.stringify('http-string'), {}, 400, 'invalid_request'],
      ['a body over BODY_LIMIT_BYTES', JSON.stringify({ name: 'x'.repeat(3000), email: 'big@example.com', slug: 'http-big' }), {}, 413, 'payload_too_large'],
      ['a text/plain body', JSON.stringify({ name: 'Text', email: 'text@example.com', slug: 'http-text' }), { 'content-type': 'text/plain' }, 415, 'unsupported_media_type'],
    ];

    it.each(bodyCases)('%s is refused with its status and creates nothing', async (_label, payload, headers, status) => {
      const res = await postAccount(payload, headers);
      expect(res.status).toBe(status);
      expect(res.headers['x-request-id']).toEqual(expect.any(String));
      for (const slug of ['http-broken', 'http-array', 'http-string', 'http-big', 'http-text']) {
        expect(await accountExists(slug)).toBe(false);
      }
    });

    it('the oversized case really is over the 2048-byte limit', () => {
      expect(Buffer.byteLength(bodyCases[3][1])).toBeGreaterThan(2048);
    });

    // Regression: awaiting a Fastify plugin registration at module init left the API routes
    // with Fastify's default error handler, so body-parsing errors lost the envelope.
    it.each(bodyCases)('%s gets the spec part 7 error envelope', async (_label, payload, headers, status, code) => {
      expectError(await postAccount(payload, headers), status, code);
    });

    it('a field failing validation is 400 validation_failed naming the field', async () => {
      const res = await postAccount(JSON.stringify({ name: 'Bad Email', email: 'not-an-email', slug: 'http-bad-email' }));
      expectError(res, 400, 'validation_failed');
      expect(res.body.error.message).toContain('email');
      expect(await accountExists('http-bad-email')).toBe(false);
    });
  });

  describe('strings Postgres cannot store (issue 10 item 2)', () => {
    const eventCount = async () => (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0].n;

    it.each([
      ['NUL', '"Nul\\u0000Name"'],
      ['a lone surrogate', '"Lone \\ud800 Name"'],
    ])('%s in a field is 400 validation_failed naming it, and the slug stays free', async (_label, name) => {
      const before = await eventCount();
      const res = await postAccount(`{"name": ${name}, "email": "nul@example.com", "slug": "http-nul"}`);
      expectError(res, 400, 'validation_failed');
      expect(res.body.error.message).toContain('"name"');
      expect(await eventCount()).toBe(before);
      expect(await accountExists('http-nul')).toBe(false);
    });

    it('names a nested field', async () => {
      const res = await postAccount('{"name": "Ok", "email": "n@example.com", "extra": {"list": ["a", "b\\u0000"]}}');
      expectError(res, 400, 'validation_failed');
      expect(res.body.error.message).toContain('"extra.list[1]"');
    });

    it('a listing refused for a NUL in its title claims no slug', async () => {
      const { key } = await t.accountWithKey();
      const grant = await upload(t, key, 'policy.onnx', modelBytes('bytes'));
      const before = await eventCount();
      const bad = await t.request('POST', '/v1/models', { key, body: modelBody(grant, { title: 'Nul\u0000 Policy' }) });
      expectError(bad, 400, 'validation_failed');
      expect(bad.body.error.message).toContain('"title"');
      expect(await eventCount()).toBe(before);
      const good = await t.request('POST', '/v1/models', { key, body: modelBody(grant, { title: 'Nul Policy' }) });
      expect(good.status).toBe(201);
      expect(good.body.slug).toBe('nul-policy');
    });

    it.each([
      ['/admin/keys?account=%00', 'account'],
      ['/admin/ledger/verify?account=%00', 'account'],
      ['/admin/accounts/a%00b', 'idOrSlug'],
    ])('%s is 400 validation_failed naming %s', async (url, field) => {
      const res = await t.admin('GET', url);
      expectError(res, 400, 'validation_failed');
      expect(res.body.error.message).toContain(`"${field}"`);
    });

    // Within this app's 2048-byte limit; the hostile-input suite sends 5,000 and 100,000 levels.
    it('JSON nested deeper than 64 levels is 400 invalid_request', async () => {
      expectError(await postAccount('['.repeat(1000) + ']'.repeat(1000)), 400, 'invalid_request');
      const deep = await postAccount('{"a":'.repeat(65) + '1' + '}'.repeat(65));
      expectError(deep, 400, 'invalid_request');
      expect(deep.body.error.message).toContain('nested deeper than 64');
    });
  });

  describe('the hosted checkout page takes only its form (issue 10 item 2)', () => {
    let checkoutPath: string;
    beforeAll(async () => {
      const seller = await t.accountWithKey();
      const grant = await upload(t, seller.key, 'policy.onnx', modelBytes('bytes'));
      const model = await t.request('POST', '/v1/models', { key: seller.key, body: modelBody(grant, { title: 'Checkout Page Policy', price_cents: 500 }) });
      expect(model.status).toBe(201);
      const buyer = await t.accountWithKey();
      const session = await openCheckout(t, buyer.key, { asset: model.body.slug });
      expect(session.status).toBe(201);
      checkoutPath = pathOf(session.body.checkout_url);
    });

    it.each([
      ['text/plain', `card_number=${PAYS}`, 'text/plain', 415, 'unsupported_media_type'],
      ['JSON', JSON.stringify({ card_number: PAYS }), 'application/json', 415, 'unsupported_media_type'],
      ['a form over the body limit', `card_number=${PAYS}&pad=${'x'.repeat(4096)}`, 'application/x-www-form-urlencoded', 413, 'payload_too_large'],
    ])('%s is refused in the envelope and pays nothing', async (_label, payload, type, status, code) => {
      expectError(await t.request('POST', checkoutPath, { payload, headers: { 'content-type': type } }), status, code);
      const page = await t.request('GET', checkoutPath);
      expect(page.text).toContain('Card number');
    });

    it('no body at all is the form again with 400', async () => {
      const res = await t.request('POST', checkoutPath);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text).toContain('Unknown card number');
    });
  });

  it('an unknown route is 404 not_found in the error envelope', async () => {
    expectError(await t.request('GET', '/v1/nope'), 404, 'not_found');
  });

  describe('x-request-id', () => {
    it('echoes a safe client-sent id on success and on errors', async () => {
      const ok = await t.request('GET', '/admin/accounts/http-good', { headers: adminHeaders({ 'x-request-id': 'abc-123' }) });
      expect(ok.status).toBe(200);
      expect(ok.headers['x-request-id']).toBe('abc-123');

      const failed = await t.request('GET', '/v1/me', { headers: { 'x-request-id': 'abc-123' } });
      expectError(failed, 401, 'missing_credentials');
      expect(failed.body.error.request_id).toBe('abc-123');
    });

    it('generates one on every response when none is sent', async () => {
      const ok = await t.admin('GET', '/admin/accounts/http-good');
      expect(ok.status).toBe(200);
      expect(ok.headers['x-request-id']).toEqual(expect.any(String));
      const other = await t.admin('GET', '/admin/accounts/http-good');
      expect(other.headers['x-request-id']).not.toBe(ok.headers['x-request-id']);
    });

    it.each([
      ['with a space', 'abc 123'],
      ['of 200 characters', 'a'.repeat(200)],
    ])('replaces a client-sent id %s with a generated one', async (_label, sent) => {
      const res = await t.request('GET', '/v1/me', { headers: { 'x-request-id': sent } });
      expectError(res, 401, 'missing_credentials');
      expect(res.headers['x-request-id']).not.toBe(sent);
      expect(String(res.headers['x-request-id']).length).toBeGreaterThan(0);
      expect(String(res.headers['x-request-id'])).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
    });

    it('keeps a client-sent id of exactly 128 safe characters', async () => {
      const sent = 'b'.repeat(128);
      const res = await t.request('GET', '/v1/me', { headers: { 'x-request-id': sent } });
      expect(res.headers['x-request-id']).toBe(sent);
    });
  });

  describe('canonical host', () => {
    it('redirects the bare domain with 308 to the www host, keeping path and query', async () => {
      const res = await t.request('GET', '/v1/me?x=1', { headers: { host: 'example.com' } });
      expect(res.status).toBe(308);
      expect(res.headers.location).toBe('http://www.example.com/v1/me?x=1');
    });

    it('keeps https when the proxy says so', async () => {
      const res = await t.request('GET', '/v1/me?x=1', { headers: { host: 'example.com', 'x-forwarded-proto': 'https' } });
      expect(res.status).toBe(308);
      expect(res.headers.location).toBe('https://www.example.com/v1/me?x=1');
    });

    it('does not redirect the www host', async () => {
      const res = await t.request('GET', '/v1/me?x=1', { headers: { host: 'www.example.com' } });
      expect(res.headers.location).toBeUndefined();
      expectError(res, 401, 'missing_credentials');
    });
  });

  describe('operator API token', () => {
    it('is 401 missing_credentials without a token', async () => {
      const res = await t.request('POST', '/admin/accounts', { body: { name: 'No Token', email: 'nt@example.com', slug: 'http-no-token' } });
      expectError(res, 401, 'missing_credentials');
      expect(await accountExists('http-no-token')).toBe(false);
    });

    it('is 401 with a wrong token and creates nothing', async () => {
      const res = await t.request('POST', '/admin/accounts', {
        body: { name: 'Wrong Token', email: 'wt@example.com', slug: 'http-wrong-token' },
        headers: { authorization: 'Bearer not-the-admin-token' },
      });
      expectError(res, 401, 'invalid_admin_token');
      expect(await accountExists('http-wrong-token')).toBe(false);
    });

    it('is not opened by an API key', async () => {
      const { key } = await t.accountWithKey();
      const res = await t.request('POST', '/admin/accounts', { key, body: { name: 'Key', email: 'k@example.com', slug: 'http-api-key' } });
      expect(res.status).toBe(401);
      expect(res.body.error.request_id).toBe(res.headers['x-request-id']);
      expect(await accountExists('http-api-key')).toBe(false);
    });
  });
});
