import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { publishModel } from '../catalog/catalog-client';
import { openCheckout, payOnPage, PAYS } from '../commerce/commerce-client';
import { createJob, getJob, grantCredits, jobAction, waitForStage } from '../factory/factory-client';
import { Response, startTestApp, TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { routesOf } from '../support/routes';
import { mcapFile } from '../support/asset-files';

/** Fastify's /v1/listings/:idOrSlug is OpenAPI's /v1/listings/{idOrSlug}; a shard's wildcard rest of the path is {path}. */
const openApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, '{$1}').replace(/\/\*$/, '/{path}');
const pointer = (...parts: string[]) => parts.map((p) => '/' + p.replace(/~/g, '~0').replace(/\//g, '~1')).join('');

describe('OpenAPI document (issue 15)', () => {
  let t: TestApp;
  let doc: any;
  let key: string;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);

  beforeAll(async () => {
    t = await startTestApp();
    ({ key } = await t.accountWithKey());
    const res = await t.request('GET', '/v1/openapi.json');
    doc = res.body;
    // The whole document as one schema resource, so the responses' $refs resolve inside it.
    ajv.addSchema({ ...doc, $id: 'https://svc.test/openapi.json' });
  });
  afterAll(() => t.close());

  /** The response `res` validates against what the document says `METHOD path` answers with its status. */
  function expectDocumented(method: string, path: string, res: Response) {
    const operation = doc.paths[path]?.[method.toLowerCase()];
    expect({ operation: `${method} ${path}`, found: Boolean(operation) }).toEqual({ operation: `${method} ${path}`, found: true });
    const status = String(res.status);
    let at = pointer('paths', path, method.toLowerCase(), 'responses', operation.responses[status] ? status : 'default');
    let response = operation.responses[status] ?? operation.responses.default;
    if (response.$ref) {
      at = response.$ref.slice(1);
      response = response.$ref.split('/').slice(1).reduce((o: any, k: string) => o[k], doc);
    }
    expect(response.content?.['application/json']).toBeDefined();
    const validate = ajv.getSchema(`https://svc.test/openapi.json#${at}${pointer('content', 'application/json', 'schema')}`)!;
    const valid = validate(res.body);
    expect({ what: `${method} ${path} ${status}`, errors: valid ? null : validate.errors, body: valid ? null : res.body }).toEqual({
      what: `${method} ${path} ${status}`,
      errors: null,
      body: null,
    });
  }

  it('is served without a key, as OpenAPI 3.1 JSON', async () => {
    const res = await t.request('GET', '/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.components.securitySchemes.ApiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('serves the reference page and its assets without a key, with no CDN', async () => {
    const page = await t.request('GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const sources = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(sources.length).toBeGreaterThan(2);
    for (const source of sources) {
      expect(source).toMatch(/^\/docs\//);
      expect({ source, status: (await t.request('GET', source)).status }).toEqual({ source, status: 200 });
    }
    const missing = await t.request('GET', '/docs/package.json');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');
  });

  it('lists every /v1 route Fastify registered, with its method', () => {
    const routes = routesOf(t).filter((r) => r.path.startsWith('/v1/'));
    expect(routes.length).toBeGreaterThan(30);
    const missing = routes.filter((r) => !doc.paths[openApiPath(r.path)]?.[r.method.toLowerCase()]).map((r) => `${r.method} ${r.path}`);
    expect(missing).toEqual([]);
    // ...and nothing else: /admin, health, metrics and processor webhooks stay out.
    expect(Object.keys(doc.paths).filter((p) => !p.startsWith('/v1/'))).toEqual([]);
  });

  it('gives every keyed operation its scopes as a bearer security requirement and the error envelope', () => {
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        if (path === '/v1/openapi.json') {
          expect(op.security).toEqual([]);
          continue;
        }
        const what = `${method.toUpperCase()} ${path}`;
        expect({ what, security: op.security }).toEqual({ what, security: [{ ApiKey: op['x-required-scopes'] }] });
        expect({ what, unauthorized: op.responses['401'] }).toEqual({ what, unauthorized: { $ref: '#/components/responses/Unauthorized' } });
        expect({ what, default: op.responses.default }).toEqual({ what, default: { $ref: '#/components/responses/Error' } });
        expect(Object.keys(op.responses).some((s) => s.startsWith('2'))).toBe(true);
      }
    }
    expect(doc.paths['/v1/listings'].post['x-required-scopes']).toEqual(['listings:write']);
    expect(doc.paths['/v1/uploads'].post['x-required-scopes']).toEqual(['models:upload', 'datasets:upload']);
    expect(doc.paths['/v1/me'].get['x-required-scopes']).toEqual([]);
  });

  it('names every operation in verbNoun form, each name once (issue 42)', () => {
    const ids = Object.values<any>(doc.paths).flatMap((item) => Object.values<any>(item).map((op) => op.operationId));
    expect(ids.length).toBeGreaterThan(50);
    expect(ids.filter((id) => !/^[a-z]+[A-Z][A-Za-z]*$/.test(id))).toEqual([]);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    expect(doc.paths['/v1/models'].get.operationId).toBe('listModels');
    expect(doc.paths['/v1/purchases'].post.operationId).toBe('createPurchase');
    expect(doc.paths['/v1/balance'].get.operationId).toBe('getBalance');
  });

  it('gives every JSON request body and 2xx JSON answer an example that validates against its own schema (issue 42)', () => {
    const checked: string[] = [];
    const problems: unknown[] = [];
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        const media: [string, string][] = [];
        if (op.requestBody?.content?.['application/json']) media.push(['request', pointer('paths', path, method, 'requestBody', 'content', 'application/json')]);
        for (const status of Object.keys(op.responses).filter((s) => s.startsWith('2'))) {
          if (op.responses[status].content?.['application/json']) media.push([status, pointer('paths', path, method, 'responses', status, 'content', 'application/json')]);
        }
        for (const [what, at] of media) {
          const content = at.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~')).reduce((o: any, k) => o[k], doc);
          const name = `${method.toUpperCase()} ${path} ${what}`;
          checked.push(name);
          if (content.example === undefined) {
            problems.push({ name, problem: 'no example' });
            continue;
          }
          const validate = ajv.getSchema(`https://svc.test/openapi.json#${at}/schema`)!;
          if (!validate(content.example)) problems.push({ name, errors: validate.errors });
        }
      }
    }
    expect(problems).toEqual([]);
    expect(checked.length).toBeGreaterThan(70);
    // The check bites: an example missing a required field does not validate.
    const validate = ajv.getSchema(`https://svc.test/openapi.json#${pointer('paths', '/v1/me', 'get', 'responses', '200', 'content', 'application/json', 'schema')}`)!;
    expect(validate({ ...doc.paths['/v1/me'].get.responses['200'].content['application/json'].example, key: undefined })).toBe(false);
  });

  it('describes request bodies from the DTOs’ class-validator rules', () => {
    const body = doc.paths['/v1/models'].post.requestBody.content['application/json'].schema;
    expect(body).toEqual({ $ref: '#/components/schemas/PublishModelDto' });
    const dto = doc.components.schemas.PublishModelDto;
    expect(dto.required).toEqual(expect.arrayContaining(['title', 'type', 'license', 'storage_path', 'file_name', 'file_size']));
    expect(dto.properties.file_size).toMatchObject({ type: 'integer', minimum: 1 });
    expect(dto.properties.title).toMatchObject({ type: 'string', minLength: 1, maxLength: 200 });
    expect(JSON.stringify(doc)).not.toContain('"nullable"');
  });

  it('matches real responses: success bodies', async () => {
    const me = await t.request('GET', '/v1/me', { key });
    expectDocumented('GET', '/v1/me', me);
    // The check bites: a body missing a documented field does not pass.
    expect(() => expectDocumented('GET', '/v1/me', { ...me, body: { ...me.body, key: undefined } })).toThrow();
    const draft = await t.request('POST', '/v1/listings', { key, body: { title: 'Grasp policy', price_cents: 1500, tags: ['grasping'] } });
    expect(draft.status).toBe(201);
    expectDocumented('POST', '/v1/listings', draft);
    expectDocumented('GET', '/v1/listings/{idOrSlug}', await t.request('GET', `/v1/listings/${draft.body.id}`, { key }));
    expectDocumented('GET', '/v1/listings', await t.request('GET', '/v1/listings?limit=5', { key }));
    expectDocumented('GET', '/v1/uploads', await t.request('GET', '/v1/uploads', { key }));
    const grant = await t.request('POST', '/v1/uploads', { key, body: { file_name: 'policy.onnx', file_size: 10 } });
    expect(grant.status).toBe(200);
    expectDocumented('POST', '/v1/uploads', grant);
    expectDocumented('GET', '/v1/usage', await t.request('GET', '/v1/usage', { key }));
    // Lists, empty or not, with their extra top-level fields.
    for (const path of ['/v1/models', '/v1/datasets', '/v1/purchases', '/v1/balance_transactions', '/v1/payouts', '/v1/webhook_endpoints', '/v1/inference/models']) {
      const res = await t.request('GET', path, { key });
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      expectDocumented('GET', path, res);
    }
    // The OpenAI base URL (issue 42): its list, one model, and the 404 of an unknown one.
    expectDocumented('GET', '/v1/openai/models', await t.request('GET', '/v1/openai/models', { key }));
    expectDocumented('GET', '/v1/openai/models/{id}', await t.request('GET', '/v1/openai/models/svc-fast-8b', { key }));
    expectDocumented('GET', '/v1/openai/models/{id}', await t.request('GET', '/v1/openai/models/gpt-5', { key }));
  });

  it('matches real responses: a generation job through its stages', async () => {
    const { key: creator, accountId } = await t.accountWithKey({ scopes: ['factory:run'] });
    await grantCredits(t, accountId, 1);
    const created = await createJob(t, creator, 'a differential-drive base, 0.5 m wide, 10 kg payload');
    expect(created.status).toBe(201);
    expectDocumented('POST', '/v1/factory/jobs', created);
    const planned = await waitForStage(t, creator, created.body.id, 'awaiting_approval');
    expect(planned.plan).not.toBeNull();
    expectDocumented('GET', '/v1/factory/jobs/{id}', await getJob(t, creator, created.body.id));
    expectDocumented('POST', '/v1/factory/jobs/{id}/approve', await jobAction(t, creator, created.body.id, 'approve'));
    await waitForStage(t, creator, created.body.id, 'review');
    expectDocumented('GET', '/v1/factory/jobs/{id}', await getJob(t, creator, created.body.id));
    expectDocumented('POST', '/v1/factory/jobs/{id}/publish', await jobAction(t, creator, created.body.id, 'publish', { price_cents: 1500 }));
    expectDocumented('GET', '/v1/factory/jobs', await t.request('GET', '/v1/factory/jobs', { key: creator }));
    expectDocumented('POST', '/v1/factory/jobs', await createJob(t, creator, 'another base')); // 402: no credit left
  });

  it('matches real responses: errors in the envelope', async () => {
    const unauthorized = await t.request('GET', '/v1/me');
    expect(unauthorized.status).toBe(401);
    expectDocumented('GET', '/v1/me', unauthorized);
    expect(() => expectDocumented('GET', '/v1/me', { ...unauthorized, body: { error: { code: 'x' } } })).toThrow();

    const notFound = await t.request('GET', '/v1/listings/no-such-listing', { key });
    expect(notFound.status).toBe(404);
    expectDocumented('GET', '/v1/listings/{idOrSlug}', notFound);

    const invalid = await t.request('POST', '/v1/listings', { key, body: { title: '' } });
    expect(invalid.status).toBe(400);
    expectDocumented('POST', '/v1/listings', invalid);

    const { key: narrow } = await t.accountWithKey({ scopes: ['models:read'] });
    const forbidden = await t.request('POST', '/v1/listings', { key: narrow, body: { title: 'x' } });
    expect(forbidden.status).toBe(403);
    expectDocumented('POST', '/v1/listings', forbidden);
  });

  it('matches real responses: an OpenAI-compatible chat completion', async () => {
    const { key: premium } = await t.accountWithKey({ tier: 'premium' });
    const body = { model: 'svc-fast-8b', messages: [{ role: 'user', content: 'Hello' }] };
    const completion = await t.request('POST', '/v1/chat/completions', { key: premium, body });
    expect(completion.status).toBe(200);
    expectDocumented('POST', '/v1/chat/completions', completion);
    const free = await t.request('POST', '/v1/chat/completions', { key, body });
    expect(free.status).toBe(403);
    expectDocumented('POST', '/v1/chat/completions', free);
    const unknown = await t.request('POST', '/v1/chat/completions', { key: premium, body: { ...body, model: 'no-such-model' } });
    expect(unknown.status).toBe(404);
    expectDocumented('POST', '/v1/chat/completions', unknown);
  });

  it('matches real responses: a model sold, a dataset with a shard, a webhook endpoint', async () => {
    const model = await publishModel(t, key, { price_cents: 2500 });
    expectDocumented('GET', '/v1/models/{idOrSlug}', await t.request('GET', `/v1/models/${model.slug}`, { key }));
    expectDocumented('PATCH', '/v1/models/{idOrSlug}', await t.request('PATCH', `/v1/models/${model.slug}`, { key, body: { version: '1.1.0' } }));

    const { key: buyer } = await t.accountWithKey({ scopes: ['models:read'] });
    const unpaid = await t.request('POST', `/v1/models/${model.slug}/download`, { key: buyer });
    expect(unpaid.status).toBe(402);
    expectDocumented('POST', '/v1/models/{idOrSlug}/download', unpaid);
    const session = await openCheckout(t, buyer, { asset: model.slug });
    expect(session.status).toBe(201);
    expectDocumented('POST', '/v1/purchases', session);
    expect((await payOnPage(t, session.body.checkout_url, PAYS)).status).toBe(200);
    const purchases = await eventually(async () => {
      const res = await t.request('GET', '/v1/purchases', { key: buyer });
      return res.body.items.length > 0 && res;
    }, 15000, 'the purchase');
    expectDocumented('GET', '/v1/purchases', purchases);
    const download = await eventually(async () => {
      const res = await t.request('POST', `/v1/models/${model.slug}/download`, { key: buyer });
      return res.status === 200 && res;
    }, 15000, 'the download');
    expectDocumented('POST', '/v1/models/{idOrSlug}/download', download);
    expectDocumented('DELETE', '/v1/models/{idOrSlug}', await t.request('DELETE', `/v1/models/${model.slug}`, { key }));

    const dataset = await t.request('POST', '/v1/datasets', { key, body: { title: 'Bin picking runs', type: 'telemetry' } });
    expect(dataset.status).toBe(201);
    expectDocumented('POST', '/v1/datasets', dataset);
    const recording = mcapFile();
    const shard = await t.request('POST', `/v1/datasets/${dataset.body.id}/shards`, { key, body: { name: 'part-0001.mcap', size: recording.length } });
    expect(shard.status).toBe(200);
    expectDocumented('POST', '/v1/datasets/{idOrSlug}/shards', shard);
    await t.storage('PUT', shard.body.upload_url, { payload: recording });
    expectDocumented('GET', '/v1/datasets/{idOrSlug}/shards', await t.request('GET', `/v1/datasets/${dataset.body.id}/shards`, { key }));
    const published = await t.request('POST', `/v1/datasets/${dataset.body.id}/publish`, { key });
    expect(published.status).toBe(200);
    expectDocumented('POST', '/v1/datasets/{idOrSlug}/publish', published);
    expectDocumented('GET', '/v1/datasets/{idOrSlug}/shards/{path}', await t.request('GET', `/v1/datasets/${dataset.body.id}/shards/part-0001.mcap`, { key }));

    const endpoint = await t.request('POST', '/v1/webhook_endpoints', { key, body: { url: 'http://localhost:4242/hooks', events: ['listing.purchased'] } });
    expect(endpoint.status).toBe(201);
    expectDocumented('POST', '/v1/webhook_endpoints', endpoint);
    expectDocumented('GET', '/v1/webhook_endpoints/{id}/events', await t.request('GET', `/v1/webhook_endpoints/${endpoint.body.id}/events`, { key }));
    expectDocumented('DELETE', '/v1/webhook_endpoints/{id}', await t.request('DELETE', `/v1/webhook_endpoints/${endpoint.body.id}`, { key }));
  });
});
