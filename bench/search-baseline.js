#!/usr/bin/env node
/**
 * The baseline of bench/search.js, in its own process: a bare Fastify route that runs the
 * service's search SQL (the same statements, from dist/src/catalog/catalog-search.js) on a
 * pg.Pool of the service's size (10) and answers the same page shape. No framework, no
 * API key, no read-model waits: what the query alone costs over HTTP.
 *   DATABASE_URL=... PORT=... node bench/search-baseline.js
 */
const fastify = require('fastify');
const path = require('node:path');
const { Pool } = require('pg');
const { windowStatement, tailStatement, SEARCH_CANDIDATES } = require(path.join(__dirname, '../dist/src/catalog/catalog-search'));
const { toPublicObject } = require(path.join(__dirname, '../dist/src/catalog/listing'));

const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const app = fastify();
app.get('/v1/models', async (request) => {
  const limit = 20;
  const s = { where: ['mode = $1', 'kind = $2', "status = 'published'"], values: ['test', 'model'], q: request.query.q, candidates: SEARCH_CANDIDATES };
  const window = windowStatement(s, limit + 1);
  const rows = (await pool.query(window.text, window.values)).rows;
  if (rows.length <= limit && !(rows.length && rows[0].window_size < s.candidates)) {
    const tail = tailStatement(s, limit + 1 - rows.length);
    rows.push(...(await pool.query(tail.text, tail.values)).rows);
  }
  const items = rows.slice(0, limit);
  return { items: items.map((r) => toPublicObject(r.state)), has_more: rows.length > limit, next_cursor: rows.length > limit ? items[limit - 1].id : null };
});
app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' }).then(() => process.stdout.write('listening\n'));
process.on('SIGTERM', () => app.close().then(() => pool.end()).then(() => process.exit(0)));
