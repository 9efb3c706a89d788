import { startTestApp, TestApp } from '../support/app';
import { onnxModelParameters, mcapFile } from '../support/asset-files';
import { eventsOf, modelBody, modelBytes, publishModel, sha256, upload } from './catalog-client';

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('models: publish, read, update, unpublish', () => {
  let t: TestApp;
  let seller: { accountId: string; key: string };
  let reader: { accountId: string; key: string };

  beforeAll(async () => {
    t = await startTestApp();
    seller = await t.accountWithKey({ name: 'Robo Lab' });
    reader = await t.accountWithKey({ scopes: ['models:read'] });
  });
  afterAll(() => t.close());

  it('publishes an uploaded file and reads it by id and by slug, exactly as the event recorded it', async () => {
    const weights = modelBytes('weights!');
    const grant = await upload(t, seller.key, 'arm policy.onnx', weights);
    // A field the body does not take is refused, not dropped (issue 39), and publishes nothing.
    const typo = await t.request('POST', '/v1/models', {
      key: seller.key,
      body: modelBody(grant, { title: 'Arm Reach', price_cents: 0, file_extension: 'onnx', frameworks: ['pytorch'], unknown_field: 1 }),
    });
    expect([typo.status, typo.body.error.code, typo.body.error.message]).toEqual([400, 'validation_failed', 'Unknown parameter "unknown_field".']);
    const res = await t.request('POST', '/v1/models', {
      key: seller.key,
      body: modelBody(grant, { title: 'Arm Reach', price_cents: 0, file_extension: 'onnx', frameworks: ['pytorch'] }),
    });
    expect(res.status).toBe(201);
    expect(res.body.slug).toBe('arm-reach');
    expect(res.body).toEqual({
      id: expect.stringMatching(/^lst_/),
      slug: 'arm-reach',
      title: 'Arm Reach',
      description: 'A grasping policy for parallel grippers',
      type: 'rl-policy',
      category: 'manipulation',
      license: 'MIT',
      version: '1.0.0',
      price: { amount: 0, currency: 'usd' },
      tags: [],
      frameworks: ['pytorch'],
      hardware: [],
      sensors: [],
      ros_compatible: false,
      jetson_compatible: false,
      isaac_sim_compatible: false,
      file: { name: 'arm-policy.onnx', size: weights.length, extension: '.onnx', sha256: sha256(weights) },
      // What the ONNX inspector found, readable before purchase (issue 40).
      inspection: {
        format: 'onnx',
        ir_version: 8,
        opset: 13,
        opset_imports: [{ domain: '', version: 13 }],
        producer: 'weights! 1',
        graph_name: 'policy',
        inputs: [{ name: 'obs', elem_type: 'float', shape: ['batch', 4] }],
        outputs: [{ name: 'action', elem_type: 'float', shape: ['batch', 2] }],
        nodes: 3,
        operators: { Gemm: 2, Tanh: 1 },
        parameters: onnxModelParameters(),
        external_data: false,
        onnxruntime: 'loads',
      },
      readme: null,
      downloads: 0,
      featured: false,
      author: { slug: 'robo-lab', name: 'Robo Lab' },
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: expect.stringMatching(TIMESTAMP),
      // The seller's view (Listing, as the OpenAPI document says): inspected before the answer, so passed.
      object: 'listing',
      kind: 'model',
      status: 'published',
      validation_status: 'passed',
      validation_errors: [],
      storage_path: grant.storage_path,
      published_at: res.body.updated_at,
    });
    const { object, kind, status, validation_status, validation_errors, storage_path, published_at, ...model } = res.body;
    const byId = await t.request('GET', `/v1/models/${res.body.id}`, { key: reader.key });
    const bySlug = await t.request('GET', '/v1/models/arm-reach', { key: reader.key });
    expect(byId.body).toEqual(model);
    expect(bySlug.body).toEqual(model);

    const published = (await eventsOf(t, 'ListingPublished', seller.accountId)).filter((e) => e.data.listing_id === res.body.id);
    expect(published).toHaveLength(1);
    expect(published[0].stream_id).toBe(`listing-test-${res.body.id}`);
    expect(published[0].data).toEqual({
      listing_id: res.body.id,
      account_id: seller.accountId,
      mode: 'test',
      listing: model,
      files: [{ name: 'arm-policy.onnx', size: weights.length, sha256: sha256(weights), path: `published/${sha256(weights)}`, inspection: res.body.inspection }],
      published_at: res.body.updated_at,
    });
  });

  it.each(['dataset', 'telemetry', 'calibration'])('answers 400 to POST /v1/models of type %p, pointing to POST /v1/datasets, and creates nothing', async (type) => {
    const grant = await upload(t, seller.key, 'runs.mcap', mcapFile());
    const before = (await eventsOf(t, 'ListingDrafted', seller.accountId)).length;
    const res = await t.request('POST', '/v1/models', { key: seller.key, body: modelBody(grant, { title: `Runs ${type}`, type }) });
    expect([res.status, res.body.error.code]).toEqual([400, 'validation_failed']);
    expect(res.body.error.message).toContain('POST /v1/datasets');
    expect((await eventsOf(t, 'ListingDrafted', seller.accountId)).length).toBe(before);
  });

  it('de-duplicates slugs derived from the same title', async () => {
    const first = await publishModel(t, seller.key, { title: 'Depth Net' });
    const second = await publishModel(t, seller.key, { title: 'Depth Net' });
    expect(first.slug).toBe('depth-net');
    expect(second.slug).toBe('depth-net-2');
    // The third and later take a random suffix: a bounded number of claims however many exist.
    const third = await publishModel(t, seller.key, { title: 'Depth Net' });
    expect(third.slug).toMatch(/^depth-net-[a-z0-9]{6}$/);
    expect((await t.request('GET', `/v1/models/${third.slug}`, { key: seller.key })).body.id).toBe(third.id);
  });

  describe('bad input gets a clear error and changes nothing', () => {
    let owner: { accountId: string; key: string };
    let grant: Awaited<ReturnType<typeof upload>>;

    beforeAll(async () => {
      owner = await t.accountWithKey();
      grant = await upload(t, owner.key, 'model.onnx', modelBytes('0123456789'));
    });

    const cases: { name: string; body: () => Record<string, unknown>; code: string; message?: RegExp }[] = [
      { name: 'a price of 99 cents', body: () => modelBody(grant, { price_cents: 99 }), code: 'price_too_low' },
      { name: 'a price of 1 cent', body: () => modelBody(grant, { price_cents: 1 }), code: 'price_too_low' },
      { name: 'a negative price', body: () => modelBody(grant, { price_cents: -100 }), code: 'validation_failed', message: /price_cents/ },
      { name: 'a fractional price', body: () => modelBody(grant, { price_cents: 150.5 }), code: 'validation_failed', message: /price_cents/ },
      {
        name: 'a storage path under another account',
        body: () => modelBody(grant, { storage_path: grant.storage_path.replace(owner.accountId, seller.accountId) }),
        code: 'invalid_storage_path',
      },
      {
        name: 'a storage path that climbs out with ..',
        body: () => modelBody(grant, { storage_path: `user/${owner.accountId}/../${seller.accountId}/x.onnx` }),
        code: 'invalid_storage_path',
      },
      { name: 'a file not yet uploaded', body: () => modelBody(grant, { storage_path: `user/${owner.accountId}/1-missing.onnx` }), code: 'file_not_found' },
      { name: 'a declared size that does not match', body: () => modelBody(grant, { file_size: 11 }), code: 'validation_failed', message: /file_size/ },
      { name: 'a disallowed extension', body: () => modelBody(grant, { file_extension: '.exe' }), code: 'validation_failed', message: /file_extension/ },
      { name: 'a missing license', body: () => ({ ...modelBody(grant), license: undefined }), code: 'validation_failed', message: /license/ },
      // Licenses are SPDX (issue 40): an expression, a LicenseRef-…, or proprietary.
      { name: 'a made-up license', body: () => modelBody(grant, { license: 'totally-made-up' }), code: 'validation_failed', message: /Invalid field "license": "totally-made-up" is not an SPDX license expression/ },
      { name: 'a near-miss license', body: () => modelBody(grant, { license: 'Apache 2.0' }), code: 'validation_failed', message: /Did you mean "Apache-2\.0"\?/ },
    ];

    it.each(cases)('$name', async ({ body, code, message }) => {
      const res = await t.request('POST', '/v1/models', { key: owner.key, body: body() });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe(code);
      if (message) expect(res.body.error.message).toMatch(message);
      expect((await t.request('GET', '/v1/listings', { key: owner.key })).body.items).toEqual([]);
      expect(await eventsOf(t, 'ListingDrafted', owner.accountId)).toEqual([]);
      expect(await eventsOf(t, 'ListingSlugClaimed')).toHaveLength((await eventsOf(t, 'ListingDrafted')).length);
    });
  });

  it('PATCH changes price and version; a bad price changes nothing', async () => {
    const model = await publishModel(t, seller.key, { title: 'Patchable' });
    const patched = await t.request('PATCH', `/v1/models/${model.slug}`, { key: seller.key, body: { price_cents: 2500, version: '2.0.0' } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id: model.id, status: 'published', price: { amount: 2500, currency: 'usd' }, version: '2.0.0' });
    const tooLow = await t.request('PATCH', `/v1/models/${model.id}`, { key: seller.key, body: { price_cents: 50 } });
    expect(tooLow.status).toBe(400);
    expect(tooLow.body.error.code).toBe('price_too_low');
    const read = await t.request('GET', `/v1/models/${model.id}`, { key: reader.key });
    expect(read.body.price).toEqual({ amount: 2500, currency: 'usd' });
    expect(read.body.version).toBe('2.0.0');
  });

  it('PATCH takes SPDX expressions, LicenseRef-… and proprietary, and refuses anything else without changing the license', async () => {
    const model = await publishModel(t, seller.key, { title: 'Relicensed' });
    for (const license of ['Apache-2.0 OR MIT', 'Apache-2.0 WITH LLVM-exception', 'LicenseRef-Acme-Robotics', 'proprietary']) {
      const res = await t.request('PATCH', `/v1/models/${model.id}`, { key: seller.key, body: { license } });
      expect([res.status, res.body.license]).toEqual([200, license]);
    }
    const refused = await t.request('PATCH', `/v1/models/${model.id}`, { key: seller.key, body: { license: 'GPLv3' } });
    expect([refused.status, refused.body.error.code]).toEqual([400, 'validation_failed']);
    expect(refused.body.error.message).toMatch(/"GPLv3" is not an SPDX license expression.*Did you mean "GPL-3\.0/);
    expect((await t.request('GET', `/v1/models/${model.id}`, { key: reader.key })).body.license).toBe('proprietary');
  });

  it('DELETE unpublishes idempotently; the model then reads as 404 and the event fires once', async () => {
    const { object, kind, status, validation_status, validation_errors, storage_path, published_at, ...model } = await publishModel(t, seller.key, { title: 'Retired' });
    const first = await t.request('DELETE', `/v1/models/${model.id}`, { key: seller.key });
    expect(first.status).toBe(200);
    expect(first.body.status).toBe('unpublished');
    const again = await t.request('DELETE', `/v1/models/${model.id}`, { key: seller.key });
    expect(again.status).toBe(200);
    expect((await t.request('GET', `/v1/models/${model.id}`, { key: reader.key })).status).toBe(404);
    expect((await t.request('GET', `/v1/models/${model.id}`, { key: seller.key })).status).toBe(404);
    const unpublished = (await eventsOf(t, 'ListingUnpublished', seller.accountId)).filter((e) => e.data.listing_id === model.id);
    expect(unpublished).toHaveLength(1);
    expect(unpublished[0].data).toEqual({
      listing_id: model.id,
      account_id: seller.accountId,
      mode: 'test',
      listing: { ...model, updated_at: first.body.updated_at },
      unpublished_at: first.body.updated_at,
    });
  });

  it("answers 404, never 403, for another account's listing writes", async () => {
    const model = await publishModel(t, seller.key, { title: 'Not Yours' });
    const other = await t.accountWithKey();
    expect((await t.request('PATCH', `/v1/models/${model.id}`, { key: other.key, body: { price_cents: 0 } })).status).toBe(404);
    expect((await t.request('DELETE', `/v1/models/${model.id}`, { key: other.key })).status).toBe(404);
    expect((await t.request('GET', `/v1/models/${model.id}`, { key: reader.key })).body.price.amount).toBe(0);
  });

  it('keeps test and live marketplaces apart', async () => {
    const model = await publishModel(t, seller.key, { title: 'Test Only' });
    const live = await t.accountWithKey({ mode: 'live' });
    expect((await t.request('GET', `/v1/models/${model.id}`, { key: live.key })).status).toBe(404);
    expect((await t.request('GET', '/v1/models?q=test%20only', { key: live.key })).body.items).toEqual([]);
  });

  it('requires the scope of each endpoint', async () => {
    const grant = await upload(t, seller.key, 'scoped.onnx', modelBytes('abc'));
    const res = await t.request('POST', '/v1/models', { key: reader.key, body: modelBody(grant) });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('scope_required');
    expect(res.body.error.message).toMatch(/models:upload/);
    const patch = await t.request('PATCH', '/v1/models/whatever', { key: reader.key, body: {} });
    expect(patch.body.error.message).toMatch(/listings:write/);
  });
});
