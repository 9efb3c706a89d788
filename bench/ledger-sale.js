#!/usr/bin/env node
/**
 * A sale on a long ledger against a sale on a new one (issue 14): RecordSale through the
 * command bus of the service (in this process, on the Postgres server), on the ledger of a
 * seller with BENCH_LEDGER_ENTRIES earlier sales (default 20,000, appended through the event
 * store before the service starts) and on the ledger of a seller created for the round.
 * Each round records BENCH_SALES (200) sales on each, one after the other, order alternated
 * by round; per round the p50 of each; figures are medians of BENCH_ROUNDS (3). Also
 * reported: the first sale on the long ledger, which folds its whole history once.
 *   node bench/ledger-sale.js [--json]     (npm run build first)
 */
const { randomBytes } = require('node:crypto');
const path = require('node:path');
const { Client } = require('pg');
const { ADMIN, dbUrl, ledgerSale, median } = require('./harness');

const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const SALES = Number(process.env.BENCH_SALES || 200);
const ENTRIES = Number(process.env.BENCH_LEDGER_ENTRIES || 20_000);
const serverUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const dist = (p) => path.join(__dirname, '../dist/src', p);

async function main() {
  const json = process.argv.includes('--json');
  const name = `bench_ledger_${randomBytes(4).toString('hex')}`;
  const server = new Client({ connectionString: serverUrl });
  await server.connect();
  await server.query(`CREATE DATABASE ${name}`);
  const url = dbUrl(serverUrl, name);
  const { createApp } = require(dist('app'));
  const { loadSettings } = require(dist('config/settings'));
  const { RecordSaleCommand } = require(dist('ledger/commands/record-sale'));
  const { CommandBus } = require('@nestjs/cqrs');
  const dataDir = require('node:fs').mkdtempSync(path.join(require('node:os').tmpdir(), 'bench-ledger-'));
  const app = await createApp(loadSettings({ ...process.env, DATABASE_URL: url, DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'warn' }), { logger: ['error'] });
  await app.init();
  try {
    const fastify = app.getHttpAdapter().getInstance();
    await fastify.ready();
    const newSeller = async (label) => {
      const res = await fastify.inject({ method: 'POST', url: '/admin/accounts', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, payload: JSON.stringify({ name: `Bench ${label}`, email: `${label}@example.com` }) });
      if (res.statusCode !== 201 && res.statusCode !== 200) throw new Error(`POST /admin/accounts answered ${res.statusCode}: ${res.body}`);
      return JSON.parse(res.body).id;
    };
    const long = await newSeller('long');
    // The long ledger's history, as RecordSale would have written it, in appends of 500.
    const store = app.get(require(dist('event-store/event-store')).EVENT_STORE);
    for (let at = 0; at < ENTRIES; at += 500) {
      const events = Array.from({ length: Math.min(500, ENTRIES - at) }, (_, i) => ({ type: 'SaleRecorded', data: { ...ledgerSale(0, at + i), account_id: long } }));
      await store.append(`ledger-test-${long}`, events, at === 0 ? 'no_stream' : at - 1);
    }

    const bus = app.get(CommandBus);
    let n = 0;
    const sale = async (seller) => {
      const start = performance.now();
      const asset = { id: 'lst_bench', slug: 'bench-model', title: 'Bench model' };
      await bus.execute(new RecordSaleCommand(seller, 'test', { purchase_id: `pur_bench${n++}`, asset, amount_cents: 1000, currency: 'usd' }));
      return performance.now() - start;
    };
    const p50 = async (seller) => {
      const times = [];
      for (let i = 0; i < SALES; i++) times.push(await sale(seller));
      return median(times);
    };
    const firstOnLong = await sale(long);
    const rounds = [];
    for (let r = 0; r < ROUNDS; r++) {
      const fresh = await newSeller(`fresh${r}`);
      const round = {};
      for (const which of r % 2 ? ['fresh', 'long'] : ['long', 'fresh']) round[which] = await p50(which === 'long' ? long : fresh);
      rounds.push(round);
    }
    const result = {
      entries: ENTRIES,
      first_sale_on_long_ms: firstOnLong,
      long_p50_ms: median(rounds.map((r) => r.long)),
      fresh_p50_ms: median(rounds.map((r) => r.fresh)),
      ratio: median(rounds.map((r) => r.long / r.fresh)),
      rounds,
    };
    if (json) console.log(JSON.stringify(result));
    else {
      console.log(`sale on a ledger of ${ENTRIES} entries: p50 ${result.long_p50_ms.toFixed(2)} ms; on a new ledger: ${result.fresh_p50_ms.toFixed(2)} ms; ratio ${result.ratio.toFixed(2)} (medians of ${ROUNDS} rounds of ${SALES})`);
      console.log(`first sale on the long ledger in this process: ${firstOnLong.toFixed(1)} ms`);
    }
  } finally {
    await app.close();
    await server.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await server.end();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
