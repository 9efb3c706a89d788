/**
 * The SDK as installed from its `npm pack` tarball (run-tests.sh) against a running service
 * (clients/python/tests/serve.js: a free port, the embedded database): publish a real ONNX
 * model, buy it in the sandbox checkout, download it checked, pages, typed errors, retries with
 * one Idempotency-Key, uploads in parts with resume, datasets, webhooks verified.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as sdk from '@robotics-marketplace/sdk';
import { Marketplace, constructEvent, sign } from '@robotics-marketplace/sdk';
import { MIB, ROOT, apiError, jsonlEpisode, lossyProxy, onnxModel, pay, receiver, sha256, stopService, stub, theService } from './support.mjs';

let svc;
let tmp;
let seller;
let buyer;

before(async () => {
  svc = await theService();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ts-sdk-'));
  const uploadStateDir = path.join(tmp, 'upload-state');
  seller = new Marketplace({ apiKey: svc.seller_key, baseUrl: svc.base_url, uploadStateDir });
  // A trailing /v1 is accepted.
  buyer = new Marketplace({ apiKey: svc.buyer_key, baseUrl: `${svc.base_url}/v1`, uploadStateDir });
});

after(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
  stopService();
});

const write = (name, data) => {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, data);
  return file;
};
const unique = () => randomUUID().slice(0, 8);

async function publish(data, priceCents, client = seller) {
  const file = write(`policy-${unique()}.onnx`, data);
  return client.models.create({ file, title: `Grasp Policy ${unique()}`, type: 'rl-policy', license: 'MIT', price_cents: priceCents });
}

describe('the package', () => {
  it('exports the client (also as Client) and the typed errors', () => {
    assert.equal(sdk.Client, Marketplace);
    assert.ok(new sdk.NotFoundError(404, 'not_found', 'x', 'req_1', undefined, {}) instanceof sdk.ApiError);
    assert.equal(typeof sdk.webhooks.constructEvent, 'function');
    assert.equal(sdk.VERSION, JSON.parse(fs.readFileSync(new URL(import.meta.resolve('@robotics-marketplace/sdk/package.json')), 'utf8')).version);
  });

  it('refuses to start without an API key or with a parallel out of range, before any request', () => {
    const kept = process.env.SVC_API_KEY;
    delete process.env.SVC_API_KEY;
    try {
      assert.throws(() => new Marketplace({ baseUrl: svc.base_url }), /an API key is needed/);
    } finally {
      if (kept !== undefined) process.env.SVC_API_KEY = kept;
    }
    for (const parallel of [0, 33, 1.5]) {
      assert.throws(() => new Marketplace({ apiKey: svc.seller_key, baseUrl: svc.base_url, parallel }), /parallel must be an integer from 1 to 32/);
    }
  });
});

describe('publish, buy in the sandbox checkout, download', () => {
  it('a buyer pays for examples/policy.onnx, downloads the published bytes, and the seller verifies the sale webhook', async () => {
    const hooks = await receiver();
    const endpoint = await seller.webhookEndpoints.create({ url: hooks.url, events: ['listing.purchased'] });
    try {
      const weights = fs.readFileSync(path.join(ROOT, 'examples/policy.onnx'));
      const model = await seller.models.create({ file: path.join(ROOT, 'examples/policy.onnx'), title: `Example Policy ${unique()}`, type: 'onnx-model', license: 'MIT', price_cents: 2500 });
      assert.deepEqual(model.price, { amount: 2500, currency: 'usd' });
      assert.equal(model.file?.size, weights.length);

      // Before paying: 402 purchase_required, typed, with its request id; nothing is written.
      const out = path.join(tmp, `out-${unique()}`);
      fs.mkdirSync(out);
      const refused = await buyer.models.download(model.slug, out).catch((e) => e);
      assert.ok(refused instanceof sdk.PaymentRequiredError, String(refused));
      assert.equal(refused.status, 402);
      assert.equal(refused.code, 'purchase_required');
      assert.match(refused.requestId, /\S+/);
      assert.equal(refused.request_id, refused.requestId);
      assert.deepEqual(fs.readdirSync(out), []);

      const session = await buyer.purchases.create(model.slug);
      assert.deepEqual([session.object, session.status, session.amount_cents], ['checkout_session', 'requires_payment', 2500]);
      assert.equal(await pay(session.checkout_url), 200);

      const file = await buyer.models.download(model.slug, out);
      assert.equal(path.dirname(file), out);
      assert.equal(sha256(fs.readFileSync(file)), sha256(weights));
      assert.deepEqual(fs.readdirSync(out), [path.basename(file)]);
      const bought = (await buyer.purchases.list().toArray()).filter((p) => p.asset.slug === model.slug);
      assert.equal(bought.length, 1);

      // The seller hears of the sale, signed with the endpoint's secret.
      const { body, header } = await hooks.waitFor((event) => event.type === 'listing.purchased' && event.data.listing.slug === model.slug);
      const event = constructEvent(body, header, endpoint.secret);
      assert.equal(event.data.purchase.id, bought[0].id);
      assert.throws(() => constructEvent(Buffer.from(body.toString().replace('2500', '25')), header, endpoint.secret), sdk.SignatureVerificationError);
    } finally {
      await seller.webhookEndpoints.del(endpoint.id);
      await hooks.close();
    }
  });

  it('a download whose bytes are not the published ones throws ChecksumMismatchError and leaves nothing', async () => {
    const data = onnxModel();
    const model = await publish(data, 0);
    const grant = await seller.request('POST', `/v1/models/${model.slug}/download`);
    assert.equal(grant.file_sha256, sha256(data));
    // An API answering the real storage URL with another sha256, then another size.
    const api = await stub([
      [200, { ...grant, file_sha256: sha256('other bytes') }],
      [200, { ...grant, file_size: grant.file_size + 1 }],
    ]);
    try {
      const lying = new Marketplace({ apiKey: 'svc_test_stub', baseUrl: api.url });
      const dest = path.join(tmp, `checked-${unique()}`);
      fs.mkdirSync(dest);
      const wrongHash = await lying.models.download(model.slug, dest).catch((e) => e);
      assert.ok(wrongHash instanceof sdk.ChecksumMismatchError, String(wrongHash));
      assert.match(wrongHash.message, /expected sha256 [0-9a-f]{64}, got sha256 [0-9a-f]{64}; the download was discarded/);
      const wrongSize = await lying.models.download(model.slug, dest).catch((e) => e);
      assert.ok(wrongSize instanceof sdk.ChecksumMismatchError);
      assert.match(wrongSize.message, new RegExp(`expected ${grant.file_size + 1} bytes, got ${grant.file_size} bytes`));
      assert.deepEqual(fs.readdirSync(dest), []);
    } finally {
      await api.close();
    }
  });
});

describe('downloads over a broken connection', () => {
  it('a transfer cut midway is fetched again, and only the whole, checked file is kept', async () => {
    const data = onnxModel({ hidden: 20_000 });
    let gets = 0;
    const storage = http.createServer((req, res) => {
      gets++;
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': data.length });
      if (gets === 1) res.write(data.subarray(0, data.length >> 1), () => res.destroy());
      else res.end(data);
    });
    await new Promise((resolve) => storage.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${storage.address().port}/blob`;
    const api = await stub([[200, { url, expires_in: 300, file_name: 'policy.onnx', file_size: data.length, file_sha256: sha256(data) }]]);
    try {
      const dest = path.join(tmp, `retried-${unique()}`);
      const client = new Marketplace({ apiKey: 'svc_test_stub', baseUrl: api.url, initialRetryDelay: 10 });
      const file = await client.models.download('grasp', `${dest}/`);
      assert.equal(gets, 2);
      assert.equal(file, path.join(dest, 'policy.onnx'));
      assert.equal(sha256(fs.readFileSync(file)), sha256(data));
      assert.deepEqual(fs.readdirSync(dest), ['policy.onnx']);
    } finally {
      await api.close();
      storage.closeAllConnections();
      await new Promise((resolve) => storage.close(resolve));
    }
  });
});

describe('paging with for await', () => {
  it('walks every page in order, with the filters on every page', async () => {
    for (let i = 0; i < 5; i++) await publish(onnxModel(), 0);
    const whole = seller.models.list({ limit: 100 });
    assert.equal((await whole.firstPage()).hasMore, false);
    const everything = [];
    for await (const m of whole) everything.push(m.id);
    assert.ok(everything.length >= 5);

    const pages = [];
    for await (const page of seller.models.list({ limit: 2 }).pages()) pages.push(page);
    assert.equal(pages.length, Math.ceil(everything.length / 2));
    assert.ok(pages.slice(0, -1).every((p) => p.items.length === 2 && p.hasMore && p.nextCursor));
    const paged = [];
    for await (const m of seller.models.list({ limit: 2 })) paged.push(m.id);
    assert.deepEqual(paged, everything);

    const typed = [];
    for await (const m of seller.models.list({ type: 'rl-policy', limit: 1 })) typed.push(m.id);
    assert.deepEqual(typed, (await seller.models.list({ type: 'rl-policy', limit: 100 }).toArray()).map((m) => m.id));
    assert.deepEqual(await seller.models.list({ type: 'no-such-type', limit: 1 }).toArray(), []);
  });
});

describe('typed errors', () => {
  it('carry status, code, message and the request id of their answer', async () => {
    const missing = await buyer.models.retrieve('no-such-model').catch((e) => e);
    assert.ok(missing instanceof sdk.NotFoundError);
    assert.deepEqual([missing.status, missing.code], [404, 'not_found']);
    assert.ok(missing.message);
    assert.equal(missing.headers['x-request-id'], missing.requestId);
    assert.match(String(missing), /NotFoundError: 404 not_found: .* \(request \S+\)/);

    const low = await publish(onnxModel(), 50).catch((e) => e);
    assert.ok(low instanceof sdk.InvalidRequestError, String(low));
    assert.equal(low.code, 'price_too_low');
    assert.ok(low.requestId);

    const bad = await new Marketplace({ apiKey: `svc_test_${'x'.repeat(40)}`, baseUrl: svc.base_url }).me().catch((e) => e);
    assert.ok(bad instanceof sdk.AuthenticationError);
    assert.equal(bad.code, 'invalid_key');
  });
});

describe('retries and idempotency', () => {
  const client = (url, options = {}) => new Marketplace({ apiKey: 'svc_test_key', baseUrl: url, initialRetryDelay: 10, ...options });

  it('a POST is retried on 503, 429 and 409 idempotency_key_in_use, with one Idempotency-Key for the call', async () => {
    const s = await stub([[503, apiError('service_unavailable')], [429, apiError('rate_limited')], [409, apiError('idempotency_key_in_use')], [201, { id: 'cs_1' }]]);
    try {
      assert.deepEqual(await client(s.url).purchases.create('grasp'), { id: 'cs_1' });
      assert.equal(s.seen.length, 4);
      const keys = new Set(s.seen.map((r) => r.headers['idempotency-key']));
      assert.equal(keys.size, 1);
      assert.match([...keys][0], /^[0-9a-f-]{36}$/);
      s.script.push([201, { id: 'cs_2' }]);
      await client(s.url).purchases.create('grasp');
      assert.notEqual(s.seen[4].headers['idempotency-key'], s.seen[0].headers['idempotency-key']);
      // The caller's key wins; a GET carries none.
      s.script.push([201, { id: 'cs_3' }], [200, { id: 'acct_1' }]);
      await client(s.url).purchases.create('grasp', {}, { idempotencyKey: 'order-42' });
      assert.equal(s.seen[5].headers['idempotency-key'], 'order-42');
      await client(s.url).me();
      assert.equal(s.seen[6].headers['idempotency-key'], undefined);
      assert.equal(s.seen[6].headers.authorization, 'Bearer svc_test_key');
    } finally {
      await s.close();
    }
  });

  it('a refusal is not retried, nor a plain conflict', async () => {
    const s = await stub([[400, apiError('validation_failed')], [409, apiError('conflict')]]);
    try {
      await assert.rejects(client(s.url).purchases.create('grasp'), sdk.InvalidRequestError);
      const conflict = await client(s.url).purchases.create('grasp').catch((e) => e);
      assert.ok(conflict instanceof sdk.ConflictError);
      assert.equal(conflict.requestId, 'req_2');
      assert.equal(s.seen.length, 2);
    } finally {
      await s.close();
    }
  });

  it('after the last retry the 5xx reaches the caller typed; a Retry-After is honoured', async () => {
    const s = await stub([[503, apiError('service_unavailable'), { 'retry-after': '1' }], [503, apiError('service_unavailable')], [502, 'Bad Gateway', { 'content-type': 'text/html' }]]);
    try {
      const started = Date.now();
      const failed = await client(s.url, { maxRetries: 2 }).me().catch((e) => e);
      assert.ok(failed instanceof sdk.ServerError);
      // A proxy's page without our envelope still gets a code.
      assert.deepEqual([failed.status, failed.code, failed.requestId, s.seen.length], [502, 'http_502', 'req_3', 3]);
      assert.ok(Date.now() - started >= 1000, 'the Retry-After second was waited');
    } finally {
      await s.close();
    }
  });

  it('a service out of reach is a ConnectionError after the retries; a silent one a TimeoutError', async () => {
    const port = await new Promise((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address();
        probe.close(() => resolve(port));
      });
    });
    const unreachable = await client(`http://127.0.0.1:${port}`, { maxRetries: 2 }).me().catch((e) => e);
    assert.ok(unreachable instanceof sdk.ConnectionError, String(unreachable));
    assert.match(unreachable.message, /could not be reached \(ECONNREFUSED\)/);

    const s = await stub(['hang', 'hang', [200, { id: 'acct_1' }]]);
    try {
      // Two attempts time out, the third is answered: the same key throughout.
      assert.deepEqual(await client(s.url, { timeout: 200 }).purchases.create('grasp'), { id: 'acct_1' });
      assert.equal(new Set(s.seen.map((r) => r.headers['idempotency-key'])).size, 1);
      s.script.push('hang', 'hang');
      const timedOut = await client(s.url, { timeout: 200, maxRetries: 1 }).me().catch((e) => e);
      assert.ok(timedOut instanceof sdk.TimeoutError, String(timedOut));
      assert.equal(timedOut.code, 'timeout');
    } finally {
      await s.close();
    }
  });

  it('against the service, a POST whose answer was lost is retried with its Idempotency-Key and done once', async () => {
    const hooks = await receiver();
    const proxy = await lossyProxy(svc.base_url, 1);
    try {
      const through = new Marketplace({ apiKey: svc.seller_key, baseUrl: proxy.url, initialRetryDelay: 10 });
      const created = await through.webhookEndpoints.create({ url: hooks.url, events: ['payout.paid'] });
      assert.deepEqual(proxy.seen.map((r) => r.method), ['POST', 'POST']);
      assert.equal(proxy.seen[0].key, proxy.seen[1].key);
      assert.ok(created.secret, 'the replayed answer is the first one, secret included');
      const mine = [];
      for await (const e of seller.webhookEndpoints.list({ limit: 1 })) if (e.url === hooks.url) mine.push(e.id);
      assert.deepEqual(mine, [created.id]);

      // The caller's own key: the same call again is answered from the first, not done twice.
      const key = `order-${unique()}`;
      const first = await seller.webhookEndpoints.create({ url: hooks.url, events: ['payout.paid'] }, { idempotencyKey: key });
      const again = await seller.webhookEndpoints.create({ url: hooks.url, events: ['payout.paid'] }, { idempotencyKey: key });
      assert.equal(again.id, first.id);
      // The same key with another body is refused, typed, not answered with the first one's result.
      const reused = await seller.webhookEndpoints.create({ url: `${hooks.url}/other`, events: ['payout.paid'] }, { idempotencyKey: key }).catch((e) => e);
      assert.ok(reused instanceof sdk.InvalidRequestError, String(reused));
      assert.equal(reused.code, 'idempotency_key_reused');
      for (const id of [created.id, first.id]) await seller.webhookEndpoints.del(id);
    } finally {
      await proxy.close();
      await hooks.close();
    }
  });
});

describe('uploads', () => {
  it('a large file goes in parts, and an interrupted upload resumes with the missing parts only', async () => {
    const data = onnxModel({ hidden: 412_000 }); // 11 MiB: 3 parts at the test service's 5 MiB
    assert.ok(data.length > 10 * MIB && data.length < 15 * MIB, `${data.length}`);
    const file = write('big-policy.onnx', data);
    const stateDir = path.join(tmp, `state-${unique()}`);
    const client = new Marketplace({ apiKey: svc.seller_key, baseUrl: svc.base_url, parallel: 1, uploadStateDir: stateDir });
    const stopped = await client.uploads.file(file, { onProgress: (sent) => { if (sent > 0) throw new Error('interrupted'); } }).catch((e) => e);
    assert.ok(stopped instanceof sdk.UploadError, String(stopped));
    assert.match(stopped.message, /interrupted; 1 of 3 parts are uploaded and kept/);
    assert.equal(fs.readdirSync(stateDir).length, 1);

    const reports = [];
    const fields = await client.uploads.file(file, { onProgress: (sent) => reports.push(sent) });
    // The first report is the part kept from the first call; then one per part sent now.
    assert.deepEqual(reports, [5 * MIB, 10 * MIB, data.length]);
    assert.deepEqual([fields.file_name, fields.file_size, fields.file_extension], ['big-policy.onnx', data.length, '.onnx']);
    assert.deepEqual(fs.readdirSync(stateDir), []);

    const model = await client.models.create({ ...fields, title: `Big Policy ${unique()}`, type: 'rl-policy', license: 'MIT', price_cents: 0 });
    const copy = await buyer.models.download(model.slug, path.join(tmp, 'big-copy.onnx'));
    assert.equal(sha256(fs.readFileSync(copy)), sha256(data));
  });

  it('a file changed since the interruption is uploaded afresh, not joined to the old parts', async () => {
    const file = write('changing.onnx', onnxModel({ hidden: 412_000 }));
    const client = new Marketplace({ apiKey: svc.seller_key, baseUrl: svc.base_url, parallel: 2, uploadStateDir: path.join(tmp, `state-${unique()}`) });
    await assert.rejects(client.uploads.file(file, { onProgress: (sent) => { if (sent > 0) throw new Error('stop'); } }), /parts are uploaded and kept/);
    const data = onnxModel({ hidden: 412_000 });
    fs.writeFileSync(file, data);
    const reports = [];
    const fields = await client.uploads.file(file, { onProgress: (sent) => reports.push(sent) });
    assert.equal(reports[0], 0);
    assert.equal(reports.at(-1), data.length);
    const model = await client.models.create({ ...fields, title: `Changed ${unique()}`, type: 'rl-policy', license: 'MIT', price_cents: 0 });
    // A directory named with a trailing slash is made, and the file keeps its published name.
    const copy = await buyer.models.download(model.slug, `${path.join(tmp, `copies-${unique()}`)}/`);
    assert.equal(path.basename(copy), 'changing.onnx');
    assert.equal(sha256(fs.readFileSync(copy)), sha256(data));
  });

  it('a file that cannot be read is refused before any grant', async () => {
    const missing = await seller.uploads.file(path.join(tmp, 'nope.onnx')).catch((e) => e);
    assert.ok(missing instanceof sdk.UploadError);
    assert.equal(missing.code, 'usage');
    assert.match(missing.message, /cannot read .*nope\.onnx: ENOENT/);
    await assert.rejects(seller.uploads.file(tmp), /is not a file/);
  });
});

describe('datasets', () => {
  it('a directory becomes shards, and a buyer downloads the whole dataset checked', async () => {
    const source = path.join(tmp, `episodes-${unique()}`);
    fs.mkdirSync(source);
    const shards = Object.fromEntries([0, 1, 2].map((i) => [`episode-${i}.jsonl`, jsonlEpisode(i, 10 + i, randomBytes(16))]));
    for (const [name, data] of Object.entries(shards)) fs.writeFileSync(path.join(source, name), data);
    const dataset = await seller.datasets.create({ title: `Bin picking ${unique()}`, description: 'Episodes', price_cents: 0 });
    const sent = await seller.datasets.uploadDir(source, { dataset: dataset.id });
    assert.deepEqual([sent.uploaded.sort(), sent.skipped, sent.count], [Object.keys(shards).sort(), 0, 3]);
    const again = await seller.datasets.uploadDir(source, { dataset: dataset.id });
    assert.deepEqual([again.uploaded, again.skipped], [[], 3]);
    await seller.datasets.publish(dataset.id);

    const dest = path.join(tmp, `copy-${unique()}`);
    const paths = await buyer.datasets.download(dataset.slug, dest);
    assert.deepEqual(paths.map((p) => path.basename(p)), Object.keys(shards).sort());
    for (const p of paths) assert.equal(sha256(fs.readFileSync(p)), sha256(shards[path.basename(p)]));
    const listed = Object.fromEntries((await buyer.datasets.shards(dataset.slug)).items.map((s) => [s.name, s.sha256]));
    assert.deepEqual(listed, Object.fromEntries(Object.entries(shards).map(([n, d]) => [n, sha256(d)])));

    // A shard changed locally is fetched again; the others are kept as they are.
    const damaged = path.join(dest, 'episode-1.jsonl');
    fs.writeFileSync(damaged, 'damaged');
    const kept = fs.statSync(path.join(dest, 'episode-0.jsonl')).mtimeMs;
    await buyer.datasets.download(dataset.slug, dest);
    assert.deepEqual(fs.readFileSync(damaged), shards['episode-1.jsonl']);
    assert.equal(fs.statSync(path.join(dest, 'episode-0.jsonl')).mtimeMs, kept);
  });

  it('an empty directory is refused before any request', async () => {
    const empty = fs.mkdtempSync(path.join(tmp, 'empty-'));
    const refused = await seller.datasets.uploadDir(empty, { dataset: 'ds_none' }).catch((e) => e);
    assert.ok(refused instanceof sdk.UploadError);
    assert.deepEqual([refused.code, refused.message], ['usage', `${empty} holds no files to upload`]);
  });
});

describe('webhooks.constructEvent', () => {
  it('verifies a delivery with the endpoint secret; a tampered, unsigned, stale or foreign one does not verify', async () => {
    const hooks = await receiver();
    const endpoint = await seller.webhookEndpoints.create({ url: hooks.url, events: ['payout.paid'], description: 'ts sdk test' });
    try {
      const secret = endpoint.secret;
      const sent = await seller.webhookEndpoints.sendTest(endpoint.id);
      const { body, header } = await hooks.waitFor((event) => event.id === sent.event_id);
      const event = sdk.webhooks.constructEvent(body, header, secret);
      assert.deepEqual([event.id, event.type, event.data.endpoint.id], [sent.event_id, 'webhook.test', endpoint.id]);
      // The body as a string verifies too.
      assert.equal(constructEvent(body.toString('utf8'), header, secret).id, event.id);

      const tampered = Buffer.from(body.toString('utf8').replace('webhook.test', 'payout.paid!'));
      const cases = [
        [tampered, header, secret, /no v1 signature matches/],
        [body, header.replace('v1=', 'v1=0'), secret, /no v1 signature matches/],
        [body, header, `${secret}x`, /no v1 signature matches/],
        [body, '', secret, /missing svc-signature header/],
        [body, undefined, secret, /missing svc-signature header/],
        [body, header.split(',')[0], secret, /has no v1/],
      ];
      for (const [b, h, s, why] of cases) assert.throws(() => constructEvent(b, h, s), (e) => e instanceof sdk.SignatureVerificationError && why.test(e.message));
      // Outside the tolerance: an old delivery replayed.
      const t = Number(header.split(',')[0].slice(2));
      assert.throws(() => constructEvent(body, header, secret, { now: t + 301 }), /outside the tolerance/);
      assert.equal(constructEvent(body, header, secret, { now: t + 299 }).id, event.id);
    } finally {
      await seller.webhookEndpoints.del(endpoint.id);
      await hooks.close();
    }
  });

  it('several v1 entries verify with either secret (a rotation)', () => {
    const body = '{"id":"evt_1","type":"payout.paid","created":1,"data":{}}';
    const header = `${sign(body, 'whsec_new', 1_800_000_000)},${sign(body, 'whsec_old', 1_800_000_000).split(',')[1]}`;
    for (const secret of ['whsec_new', 'whsec_old']) assert.equal(constructEvent(body, header, secret, { now: 1_800_000_000 }).id, 'evt_1');
    assert.throws(() => constructEvent(body, header, 'whsec_other', { now: 1_800_000_000 }), sdk.SignatureVerificationError);
  });
});
