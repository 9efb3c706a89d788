#!/usr/bin/env node
/**
 * npm run seed -- --listings 100000: a published catalog made through the event store, as
 * the service would record it (per listing: ListingSlugClaimed on its slug stream, then
 * ListingDrafted and ListingPublished on its listing stream), into the database DATABASE_URL
 * names (create a fresh one for it). The service then builds catalog_listings from those
 * events like any other; this script starts it (dist/src/main.js) until that projection has
 * caught up, then VACUUM ANALYZEs the table so the planner knows its size.
 *
 * Text is deterministic (seeded PRNG). Search words with known frequencies, for bench/search.js:
 *   "gripper" in 15% of listings (common), "hexapod" in 0.05% (rare).
 * Options: --listings N (default 1000), --mode test|live (default test), --account ID.
 * Needs `npm run build` first.
 */
const { spawn } = require('node:child_process');
const net = require('node:net');
const path = require('node:path');

const dist = (p) => path.join(__dirname, '../dist/src', p);
const ADMIN = 'seed-admin-token';
const COMMON = 'gripper';
const RARE = 'hexapod';

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

/** Filler vocabulary: 20,000 pseudo-words, so no filler word is as common as COMMON. */
function vocabulary(random) {
  const syllables = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'vo', 'zi', 'pe', 'sa', 'do', 'fu', 'gi', 'ho', 'ju', 'ny', 'qu', 'we', 'xo', 'be'];
  const words = new Set();
  while (words.size < 20_000) {
    let w = '';
    for (let n = 2 + Math.floor(random() * 3); n > 0; n--) w += syllables[Math.floor(random() * syllables.length)];
    words.add(w);
  }
  return [...words];
}

/** Listing i's events, deterministic in i. */
function listingEvents(i, random, words, mode, accountId) {
  const pick = () => words[Math.floor(random() * words.length)];
  const text = (n) => Array.from({ length: n }, pick).join(' ');
  const extra = [random() < 0.15 ? COMMON : null, random() < 0.0005 ? RARE : null].filter(Boolean);
  const id = `lst_seed${String(i).padStart(7, '0')}`;
  const slug = `seed-${i}`;
  const title = `${text(2)} ${i}`;
  // The marker words land in title, tags or description, so ranks differ.
  const where = Math.floor(random() * 10);
  const tags = [pick(), pick()];
  let description = text(60 + Math.floor(random() * 120));
  let fullTitle = title;
  for (const word of extra) {
    if (where === 0) fullTitle = `${word} ${fullTitle}`;
    else if (where < 3) tags.push(word);
    else description = `${description} ${word} ${text(5)}`;
  }
  const created = new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString();
  const published = new Date(Date.UTC(2026, 0, 1) + i * 60_000 + 30_000).toISOString();
  const details = {
    title: fullTitle, description, type: ['onnx-model', 'rl-policy', 'ros-package'][i % 3],
    category: ['manipulation', 'slam', 'vision', 'locomotion'][i % 4], license: 'MIT', version: '1.0.0',
    price: { amount: i % 5 === 0 ? 0 : 100 + (i % 900), currency: 'usd' }, tags,
    frameworks: [['pytorch'], ['jax'], ['onnx']][i % 3], hardware: i % 7 === 0 ? ['ur5'] : [], sensors: i % 5 === 0 ? ['lidar'] : [],
    ros_compatible: i % 2 === 0, jetson_compatible: i % 3 === 0, isaac_sim_compatible: i % 11 === 0,
    file: { name: 'policy.onnx', size: 1024, extension: '.onnx', storage_path: `uploads/seed/${id}.onnx` },
  };
  const author = { slug: 'seed-seller', name: 'Seed Seller' };
  return {
    slugStream: `listingslug-${mode}-${slug}`,
    claim: { type: 'ListingSlugClaimed', data: { slug, listing_id: id, mode } },
    stream: `listing-${mode}-${id}`,
    events: [
      { type: 'ListingDrafted', data: { listing_id: id, account_id: accountId, mode, kind: 'model', slug, author, details, created_at: created } },
      {
        type: 'ListingPublished',
        data: { listing_id: id, account_id: accountId, mode, listing: { id, slug, title: fullTitle }, files: [], published_at: published },
      },
    ],
  };
}

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** Runs the service on the database until catalog_listings has caught up with the log. */
async function project(url) {
  const port = await freePort();
  const child = spawn(process.execPath, [dist('main.js')], {
    env: { ...process.env, DATABASE_URL: url, PORT: String(port), ADMIN_TOKEN: ADMIN, NODE_ENV: 'development', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    for (let i = 0; ; i++) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/admin/projections`, { headers: { authorization: `Bearer ${ADMIN}` } });
        const catalog = (await res.json()).items.find((p) => p.name === 'catalog_listings');
        if (catalog && !catalog.behind && !catalog.rebuilding) return;
        if (i % 50 === 0 && catalog) process.stderr.write(`  catalog_listings lag ${catalog.lag_seconds} s\n`);
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

async function main() {
  const listings = Number(option('listings', 1000));
  const mode = option('mode', 'test');
  const accountId = option('account', 'acct_seedseller');
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL must name the (fresh) database to seed');
  const { PostgresDatabase } = require(dist('database/postgres-database'));
  const { migrate } = require(dist('database/migrate'));
  const { PostgresEventStore } = require(dist('event-store/postgres/postgres-event-store'));
  const { seededRandom } = require(dist('platform/seeded-random'));
  const db = new PostgresDatabase(url, 8);
  await migrate(db);
  const store = new PostgresEventStore(db);
  const words = vocabulary(seededRandom(1));
  const start = performance.now();
  let next = 0;
  // 8 appenders; each listing's text comes from its own seed, so the catalog does not depend on scheduling.
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let i = next++; i < listings; i = next++) {
        const l = listingEvents(i, seededRandom(1000 + i), words, mode, accountId);
        await store.append(l.slugStream, [l.claim], 'no_stream');
        await store.append(l.stream, l.events, 'no_stream');
        if (i % 10_000 === 0) process.stderr.write(`  appended ${i}/${listings}\n`);
      }
    }),
  );
  const appended = (performance.now() - start) / 1000;
  await store.close();
  await project(url);
  // catalog_listings is a view of the live build's table: VACUUM ANALYZE the table itself (a view has no
  // statistics); the vacuum also marks the pages all-visible, as autovacuum would in a while.
  const { rows: tables } = await db.query(
    "SELECT format('%I.%I', n.nspname, c.relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relname = 'catalog_listings' AND c.relkind = 'r'",
  );
  for (const t of tables) await db.query(`VACUUM ANALYZE ${t.name}`);
  const { rows } = await db.query("SELECT count(*)::int AS n FROM catalog_listings WHERE status = 'published'");
  await db.close();
  const total = (performance.now() - start) / 1000;
  process.stdout.write(`seeded ${rows[0].n} published listings: events appended in ${appended.toFixed(1)} s, projected by ${total.toFixed(1)} s\n`);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
