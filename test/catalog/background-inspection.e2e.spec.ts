import { randomBytes } from 'node:crypto';
import { InspectionWorker } from '../../src/catalog/inspection-worker';
import { startTestApp, TestApp } from '../support/app';
import { mcapFile, onnxModel, safetensorsFile } from '../support/asset-files';
import { eventually } from '../support/eventually';
import { createEndpoint, deliveries, ENCRYPTION_KEY } from '../webhooks/helpers';
import { startReceiver } from '../webhooks/receiver';
import { eventsOf, modelBody, sha256, upload } from './catalog-client';

/**
 * Issue 40: files above the inline limit (INSPECTION_INLINE_MAX_BYTES, 1 KiB here) are
 * inspected by the inspection worker after the publish answered. The worker is stopped
 * while each publish answers, so "pending" is what the test sees, not a race it may lose.
 */
const INLINE_MAX = 1024;

describe('background inspection of files above the inline limit', () => {
  let t: TestApp;
  let seller: { accountId: string; key: string };
  let reader: { accountId: string; key: string };
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    t = await startTestApp({ env: { INSPECTION_INLINE_MAX_BYTES: String(INLINE_MAX), WEBHOOK_RETRY_SCHEDULE: '0,1,1', WEBHOOK_ENCRYPTION_KEY: ENCRYPTION_KEY } });
    seller = await t.accountWithKey({ name: 'Big Files Lab' });
    reader = await t.accountWithKey({ scopes: ['models:read'] });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  const worker = () => t.app.get(InspectionWorker);
  const own = async (id: string) => (await t.request('GET', `/v1/listings/${id}`, { key: seller.key })).body;

  /** Publishes `bytes` as policy.onnx through POST /v1/models while the worker is stopped. */
  async function publishWhileStopped(bytes: Buffer, title: string) {
    await worker().stop();
    const grant = await upload(t, seller.key, 'policy.onnx', bytes);
    return t.request('POST', '/v1/models', { key: seller.key, body: modelBody(grant, { title }) });
  }

  it('inspects a file within the limit before answering, as before', async () => {
    const small = onnxModel({ producer: 'small' });
    expect(small.length).toBeLessThanOrEqual(INLINE_MAX);
    const grant = await upload(t, seller.key, 'policy.onnx', small);
    const res = await t.request('POST', '/v1/models', { key: seller.key, body: modelBody(grant, { title: 'Small inline' }) });
    expect([res.status, res.body.validation_status, res.body.status, res.body.inspection.format]).toEqual([201, 'passed', 'published', 'onnx']);
  });

  it('answers 201 pending for a larger file, hides it from buyers, then publishes it once the worker passes it', async () => {
    const big = onnxModel({ producer: 'big', hidden: 256 });
    expect(big.length).toBeGreaterThan(INLINE_MAX);
    const res = await publishWhileStopped(big, 'Big pending');
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ validation_status: 'pending', validation_errors: [], status: 'draft', inspection: null, published_at: null });
    const id = res.body.id;
    // Not readable by buyers, nor listed, until it passes; publishing again answers the same pending listing.
    expect((await t.request('GET', `/v1/models/${id}`, { key: reader.key })).status).toBe(404);
    expect((await t.request('GET', '/v1/models?q=pending', { key: reader.key })).body.items.map((m: { id: string }) => m.id)).not.toContain(id);
    const again = await t.request('POST', `/v1/listings/${id}/publish`, { key: seller.key });
    expect([again.status, again.body.validation_status]).toEqual([200, 'pending']);
    const requested = (await eventsOf(t, 'ListingInspectionRequested', seller.accountId)).filter((e) => e.data.listing_id === id);
    expect(requested).toHaveLength(1);
    expect(requested[0].data.files).toEqual([{ name: 'policy.onnx', size: big.length, sha256: sha256(big), path: `published/${sha256(big)}` }]);

    await worker().start();
    const passed = await eventually(async () => {
      const l = await own(id);
      return l.validation_status === 'passed' && l;
    }, 20000, 'the background inspection to pass');
    expect(passed).toMatchObject({ status: 'published', validation_errors: [], file: { sha256: sha256(big) } });
    expect(passed.inspection).toMatchObject({ format: 'onnx', producer: 'big 1', onnxruntime: 'loads', inputs: [{ name: 'obs', elem_type: 'float', shape: ['batch', 4] }] });
    const bought = await t.request('GET', `/v1/models/${id}`, { key: reader.key });
    expect([bought.status, bought.body.inspection]).toEqual([200, passed.inspection]);
    const published = (await eventsOf(t, 'ListingPublished', seller.accountId)).filter((e) => e.data.listing_id === id);
    expect(published).toHaveLength(1);
    expect(published[0].data.files[0].inspection).toEqual(passed.inspection);
  });

  it('ends failed with validation_errors naming the file, and sends listing.validation_failed to the seller', async () => {
    const endpoint = await createEndpoint(t, seller.key, receiver.url, ['listing.validation_failed']);
    const junk = randomBytes(4096);
    const res = await publishWhileStopped(junk, 'Big junk');
    expect([res.status, res.body.validation_status]).toEqual([201, 'pending']);
    const id = res.body.id;

    await worker().start();
    const failed = await eventually(async () => {
      const l = await own(id);
      return l.validation_status === 'failed' && l;
    }, 20000, 'the background inspection to fail');
    expect(failed.status).toBe('draft');
    expect(failed.validation_errors).toEqual([{ code: 'invalid_format', message: expect.stringMatching(/^"policy\.onnx" is not an ONNX model: /) }]);
    expect((await t.request('GET', `/v1/models/${id}`, { key: reader.key })).status).toBe(404);

    const [delivery] = await eventually(async () => {
      const log = await deliveries(t, seller.key, endpoint.id);
      return log.length > 0 && log.every((d: { status: string }) => d.status !== 'pending') && log;
    }, 20000, 'the webhook delivery');
    expect(delivery).toMatchObject({ event_type: 'listing.validation_failed', status: 'succeeded' });
    const sent = JSON.parse(receiver.received.find((r) => r.body.includes('listing.validation_failed'))!.body);
    expect(sent).toMatchObject({ type: 'listing.validation_failed', data: { listing: { id, title: 'Big junk' }, validation_errors: failed.validation_errors } });
    // The bytes stay in storage: a publish of another upload can pass; nothing was lost.
    expect((await eventsOf(t, 'ListingValidationFailed', seller.accountId)).filter((e) => e.data.listing_id === id)).toHaveLength(1);
  });

  it('sends listing.validation_failed only for failures found in the background, not for a publish refused with a 400', async () => {
    const r = await startReceiver();
    try {
      const endpoint = await createEndpoint(t, seller.key, r.url, ['listing.validation_failed']);
      const grant = await upload(t, seller.key, 'policy.onnx', Buffer.from('onnx weights'));
      const draft = await t.request('POST', '/v1/listings', { key: seller.key, body: modelBody(grant, { title: 'Small junk' }) });
      expect(draft.status).toBe(201);
      const refused = await t.request('POST', `/v1/listings/${draft.body.id}/publish`, { key: seller.key });
      expect([refused.status, refused.body.error.code]).toEqual([400, 'validation_failed']);
      expect((await own(draft.body.id)).validation_status).toBe('failed');
      // A background failure after it: the fan-out has passed the refusal by the time it delivers this one.
      const res = await publishWhileStopped(randomBytes(2048), 'Big junk two');
      await worker().start();
      const log = await eventually(async () => {
        const d = await deliveries(t, seller.key, endpoint.id);
        return d.length > 0 && d.every((x: { status: string }) => x.status !== 'pending') && d;
      }, 20000, 'the webhook delivery');
      expect(log).toHaveLength(1);
      expect(r.received.map((x) => JSON.parse(x.body).data.listing.id)).toEqual([res.body.id]);
    } finally {
      await r.close();
    }
  });

  it('records one outcome when the worker handles the same request twice (a replay after a crash)', async () => {
    const big = onnxModel({ producer: 'twice', hidden: 256 });
    const res = await publishWhileStopped(big, 'Handled twice');
    const id = res.body.id;
    const [request] = (await eventsOf(t, 'ListingInspectionRequested', seller.accountId)).filter((e) => e.data.listing_id === id);
    const recorded = { ...request, type: 'ListingInspectionRequested', data: request.data } as any;
    await Promise.all([worker().handle(recorded), worker().handle(recorded)]);
    await worker().handle(recorded);
    expect((await eventsOf(t, 'ListingPublished', seller.accountId)).filter((e) => e.data.listing_id === id)).toHaveLength(1);
    expect((await own(id)).validation_status).toBe('passed');
    await worker().start();
  });

  it('a dataset: small shards inspected before the answer, a large one in the background, then published with every inspection', async () => {
    const putShard = async (datasetId: string, name: string, bytes: Buffer) => {
      const minted = await t.request('POST', `/v1/datasets/${datasetId}/shards`, { key: seller.key, body: { name, size: bytes.length } });
      expect((await t.storage('PUT', minted.body.upload_url, { payload: bytes })).status).toBe(200);
    };
    const dataset = (await t.request('POST', '/v1/datasets', { key: seller.key, body: { title: 'Mixed shards' } })).body;
    const small = mcapFile('small shard');
    const large = safetensorsFile({ 'policy.weight': { dtype: 'F32', shape: [64, 64] } });
    expect([small.length <= INLINE_MAX, large.length > INLINE_MAX]).toEqual([true, true]);
    await putShard(dataset.id, 'a.mcap', small);
    await putShard(dataset.id, 'b.safetensors', large);
    // A small shard that is not what it says still refuses the publish at once, before any background work.
    await putShard(dataset.id, 'c.json', Buffer.from('{"not json'));
    const refused = await t.request('POST', `/v1/datasets/${dataset.id}/publish`, { key: seller.key });
    expect([refused.status, refused.body.error.validation_errors]).toEqual([400, [{ code: 'invalid_format', message: expect.stringMatching(/^"c\.json" is not /) }]]);
    expect((await eventsOf(t, 'ListingInspectionRequested', seller.accountId)).filter((e) => e.data.listing_id === dataset.id)).toEqual([]);
    await putShard(dataset.id, 'c.json', Buffer.from('{"ok": true}'));

    await worker().stop();
    const res = await t.request('POST', `/v1/datasets/${dataset.id}/publish`, { key: seller.key });
    expect([res.status, res.body.validation_status, res.body.status]).toEqual([200, 'pending', 'draft']);
    const [request] = (await eventsOf(t, 'ListingInspectionRequested', seller.accountId)).filter((e) => e.data.listing_id === dataset.id);
    expect(request.data.files.map((f: { name: string; inspection?: { format: string } }) => [f.name, f.inspection?.format ?? null])).toEqual([
      ['a.mcap', 'mcap'],
      ['b.safetensors', null],
      ['c.json', 'json'],
    ]);
    // The public read shows published listings only, to its owner too.
    expect((await t.request('GET', `/v1/datasets/${dataset.id}`, { key: seller.key })).status).toBe(404);

    await worker().start();
    const passed = await eventually(async () => {
      const l = await own(dataset.id);
      return l.validation_status === 'passed' && l;
    }, 20000, 'the dataset to pass');
    expect(passed.status).toBe('published');
    expect(passed.inspection.files.map((f: { name: string; format: string }) => [f.name, f.format])).toEqual([
      ['a.mcap', 'mcap'],
      ['b.safetensors', 'safetensors'],
      ['c.json', 'json'],
    ]);
    expect(passed.inspection.files[1]).toMatchObject({ tensors: 1, parameters: 64 * 64 });
  });
});
