#!/usr/bin/env node
/**
 * Commands on streams that grow for ever (issue 14), on a long stream against a new one:
 *   - a sale (RecordSaleCommand through the command bus) on the ledger of a seller with
 *     BENCH_STREAM_EVENTS earlier sales (default 20,000) and on a new seller's ledger;
 *   - a download (POST /v1/models/{id}/download) of a model with that many earlier
 *     downloads and of a model published for the round.
 * The service runs in this process (its command bus and Fastify inject) on the Postgres
 * server; the long streams' history is appended through the event store first, as the
 * commands write it. Each round makes BENCH_OPS (200) of each on each, one at a time, order
 * alternated by round; per round the p50; figures are medians of BENCH_ROUNDS (3). A ratio
 * of 1 means a command costs the same whatever the stream's history. Also reported: the
 * first command on each long stream, which folds its whole history once.
 *   node bench/long-streams.js [--json]     (npm run build first)
 */
const fs = require('node:fs');
const os = require('node:os');
const { randomBytes } = require('node:crypto');
const path = require('node:path');
const { Client } = require('pg');
const { ADMIN, dbUrl, ledgerSale, median } = require('./harness');
const { onnxModel } = require('./onnx-model');

const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const OPS = Number(process.env.BENCH_OPS || 200);
const HISTORY = Number(process.env.BENCH_STREAM_EVENTS || 20_000);
const serverUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const dist = (p) => path.join(__dirname, '../dist/src', p);

/** The service's HTTP routes through Fastify inject; throws on an unexpected status. */
function client(fastify) {
  return async (method, url, { key, body, payload } = {}) => {
    const headers = { authorization: `Bearer ${key ?? ADMIN}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (payload !== undefined) headers['content-type'] = 'application/octet-stream';
    const res = await fastify.inject({ method, url, headers, payload: body !== undefined ? JSON.stringify(body) : payload });
    if (res.statusCode !== 200 && res.statusCode !== 201) throw new Error(`${method} ${url} answered ${res.statusCode}: ${res.body}`);
    return res.body ? JSON.parse(res.body) : undefined;
  };
}

async function main() {
  const json = process.argv.includes('--json');
  const name = `bench_streams_${randomBytes(4).toString('hex')}`;
  const server = new Client({ connectionString: serverUrl });
  await server.connect();
  await server.query(`CREATE DATABASE ${name}`);
  const { createApp } = require(dist('app'));
  const { loadSettings } = require(dist('config/settings'));
  const { RecordSaleCommand } = require(dist('ledger/commands/record-sale'));
  const { EVENT_STORE } = require(dist('event-store/event-store'));
  const { CommandBus } = require('@nestjs/cqrs');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-streams-'));
  const settings = loadSettings({ ...process.env, DATABASE_URL: dbUrl(serverUrl, name), DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'warn' });
  const app = await createApp(settings, { logger: ['error'] });
  await app.init();
  try {
    const fastify = app.getHttpAdapter().getInstance();
    await fastify.ready();
    const call = client(fastify);
    const store = app.get(EVENT_STORE);
    let n = 0;
    const account = async (label) => {
      const created = await call('POST', '/admin/accounts', { body: { name: `Bench ${label}`, email: `${label}@example.com` } });
      const key = await call('POST', '/admin/keys', { body: { account: created.id, mode: 'test', scopes: [] } });
      return { id: created.id, key: key.key };
    };
    const publish = async (seller, title) => {
      const model = onnxModel(title);
      const grant = await call('POST', '/v1/uploads', { key: seller.key, body: { file_name: 'policy.onnx', file_size: model.length } });
      const upload = new URL(grant.upload_url);
      await call('PUT', `${upload.pathname}${upload.search}`, { payload: model });
      const { storage_path, file_name, file_size, file_extension } = grant;
      const body = { title, description: 'A policy', type: 'rl-policy', category: 'manipulation', license: 'MIT', storage_path, file_name, file_size, file_extension };
      return call('POST', '/v1/models', { key: seller.key, body });
    };
    /** `count` events appended to `stream` in appends of 500, as `event(i)` makes them. */
    const history = async (stream, count, event) => {
      const first = (await store.readStream(stream)).length;
      for (let at = 0; at < count; at += 500) {
        const events = Array.from({ length: Math.min(500, count - at) }, (_, i) => event(at + i));
        await store.append(stream, events, first + at === 0 ? 'no_stream' : first + at - 1);
      }
    };

    const seller = await account('seller');
    const buyer = await account('buyer');
    const longModel = await publish(seller, 'Popular policy');
    await history(`ledger-test-${seller.id}`, HISTORY, (i) => ({ type: 'SaleRecorded', data: { ...ledgerSale(0, i), account_id: seller.id } }));
    const downloaded = { listing_id: longModel.id, account_id: seller.id, buyer_account_id: buyer.id, mode: 'test', asset: { id: longModel.id, slug: longModel.slug, title: longModel.title, type: 'rl-policy' } };
    await history(`listing-test-${longModel.id}`, HISTORY, () => ({ type: 'AssetDownloaded', data: { ...downloaded, downloaded_at: new Date().toISOString() } }));

    const bus = app.get(CommandBus);
    const timed = async (op) => {
      const start = performance.now();
      await op();
      return performance.now() - start;
    };
    const sale = (sellerId) =>
      timed(() =>
        bus.execute(new RecordSaleCommand(sellerId, 'test', { purchase_id: `pur_bench${n++}`, asset: { id: 'lst_bench', slug: 'bench-model', title: 'Bench model' }, amount_cents: 1000, currency: 'usd' })),
      );
    const download = (model) => timed(() => call('POST', `/v1/models/${model.id}/download`, { key: buyer.key }));
    const p50 = async (op) => {
      const times = [];
      for (let i = 0; i < OPS; i++) times.push(await op());
      return median(times);
    };
    const first = { sale: await sale(seller.id), download: await download(longModel) };
    const rounds = [];
    for (let r = 0; r < ROUNDS; r++) {
      const fresh = { seller: await account(`fresh${r}`) };
      fresh.model = await publish(fresh.seller, `Fresh policy ${r}`);
      const round = {};
      const subjects = {
        sale_long: () => sale(seller.id),
        sale_new: () => sale(fresh.seller.id),
        download_long: () => download(longModel),
        download_new: () => download(fresh.model),
      };
      const order = r % 2 ? ['sale_new', 'sale_long', 'download_new', 'download_long'] : ['sale_long', 'sale_new', 'download_long', 'download_new'];
      for (const subject of order) round[subject] = await p50(subjects[subject]);
      rounds.push(round);
    }
    const figure = (what) => ({
      long_p50_ms: median(rounds.map((r) => r[`${what}_long`])),
      new_p50_ms: median(rounds.map((r) => r[`${what}_new`])),
      ratio: median(rounds.map((r) => r[`${what}_long`] / r[`${what}_new`])),
      first_on_long_ms: first[what],
    });
    const result = { history: HISTORY, ops: OPS, rounds: ROUNDS, sale: figure('sale'), download: figure('download') };
    if (json) return console.log(JSON.stringify(result));
    console.log(`commands on a stream of ${HISTORY} earlier events against a new stream, p50 over ${OPS}, medians of ${ROUNDS} rounds`);
    for (const [what, label] of [['sale', 'sale on a ledger'], ['download', 'download of a model']]) {
      const f = result[what];
      console.log(`  ${label.padEnd(20)} long ${f.long_p50_ms.toFixed(2)} ms  new ${f.new_p50_ms.toFixed(2)} ms  ratio ${f.ratio.toFixed(2)}  (first on the long stream ${f.first_on_long_ms.toFixed(1)} ms)`);
    }
  } finally {
    await app.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    await server.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await server.end();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
