#!/usr/bin/env node
/**
 * The SDK end to end, as the README shows it: a seller listens for its sales with a webhook
 * endpoint (verified with constructEvent), publishes an ONNX policy, a buyer pays in the sandbox
 * checkout and downloads it, checked against the published sha256.
 *   SELLER_KEY=svc_test_... BUYER_KEY=svc_test_... SVC_URL=http://127.0.0.1:3000 \
 *     node examples/publish-buy-download.mjs path/to/policy.onnx
 * run-tests.sh runs it against the test service with the repository's examples/policy.onnx.
 */
import { createHash } from 'node:crypto';
import { readFileSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Marketplace, PaymentRequiredError, constructEvent } from '@robotics-marketplace/sdk';

const file = process.argv[2] ?? 'policy.onnx';
const seller = new Marketplace({ apiKey: process.env.SELLER_KEY });
const buyer = new Marketplace({ apiKey: process.env.BUYER_KEY });

// 1. A receiver for the seller's webhooks: the raw body, verified before anything is trusted.
let endpoint;
const sale = new Promise((resolve) => {
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      try {
        const event = constructEvent(Buffer.concat(chunks), req.headers['svc-signature'], endpoint.secret);
        res.writeHead(204).end();
        if (event.type === 'listing.purchased') server.close(() => resolve(event));
      } catch (error) {
        res.writeHead(400).end(error.message);
      }
    });
  });
  server.listen(0, '127.0.0.1', async () => {
    endpoint = await seller.webhookEndpoints.create({ url: `http://127.0.0.1:${server.address().port}/hooks`, events: ['listing.purchased'] });
  });
});
while (!endpoint) await new Promise((r) => setTimeout(r, 20));

// 2. The seller publishes: the file is uploaded (in parts when large, resumable), then listed.
const model = await seller.models.create({ file, title: `Example policy ${Date.now()}`, type: 'onnx-model', license: 'MIT', price_cents: 1200 });
console.log(`published ${model.slug} at ${model.price.amount} cents`);

// 3. The buyer pays in the sandbox checkout (a browser would open checkout_url), then downloads.
const dest = mkdtempSync(join(tmpdir(), 'example-download-'));
await buyer.models.download(model.slug, dest).catch((error) => {
  if (!(error instanceof PaymentRequiredError)) throw error;
  console.log(`before paying: ${error.code} (request ${error.requestId})`);
});
const session = await buyer.purchases.create(model.slug);
const paid = await fetch(session.checkout_url, { method: 'POST', body: new URLSearchParams({ card_number: '4242424242424242' }) });
if (!paid.ok) throw new Error(`the sandbox checkout answered ${paid.status}`);
const downloaded = await buyer.models.download(model.slug, dest);
const sha = createHash('sha256').update(readFileSync(downloaded)).digest('hex');
if (sha !== createHash('sha256').update(readFileSync(file)).digest('hex')) throw new Error('the downloaded bytes differ');
console.log(`downloaded ${downloaded} (sha256 ${sha.slice(0, 12)}..., checked)`);

// 4. The seller's receiver got the sale, signed.
const event = await sale;
console.log(`webhook ${event.type} verified: purchase ${event.data.purchase.id}`);
for await (const purchase of buyer.purchases.list({ limit: 10 })) console.log(`buyer owns ${purchase.asset.slug}`);
await seller.webhookEndpoints.del(endpoint.id);
