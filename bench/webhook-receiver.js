#!/usr/bin/env node
/**
 * The webhook benchmark's receiver, in its own process (bench/webhooks.js forks it), so
 * receiving never shares an event loop with the service or the baseline loop it measures.
 * Answers every POST 204 and reports each body's `id` with the time it arrived (epoch ms,
 * sub-millisecond: performance.timeOrigin + performance.now()) to the parent, in batches.
 */
const http = require('node:http');
const { performance } = require('node:perf_hooks');

let pending = [];
let timer;
const flush = () => {
  timer = undefined;
  if (!pending.length) return;
  process.send({ arrived: pending });
  pending = [];
};

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const at = performance.timeOrigin + performance.now();
    let id;
    try {
      id = JSON.parse(Buffer.concat(chunks).toString('utf8')).id;
    } catch {
      res.writeHead(400).end();
      return;
    }
    res.writeHead(204).end();
    pending.push([id, at]);
    if (pending.length >= 256) flush();
    else timer ??= setTimeout(flush, 5);
  });
});
server.keepAliveTimeout = 30000;
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('disconnect', () => process.exit(0));
