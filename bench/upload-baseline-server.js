#!/usr/bin/env node
/**
 * bench/upload.js's baseline: the least a Node HTTP server can do to take a PUT body into
 * a file and own it, with the same temp-file-then-rename step as the service (so a broken
 * upload leaves no half file), and nothing else: no routing framework, no signature, no
 * size cap. PUT /<name> lands in UPLOAD_DIR/<name>; any other request answers 200 (the
 * readiness probe). PORT and UPLOAD_DIR come from the environment; UPLOAD_HWM, when set, is
 * the write stream's highWaterMark (unset: Node's default, what a plain server uses).
 */
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { pipeline } = require('node:stream/promises');

const dir = process.env.UPLOAD_DIR;
const options = process.env.UPLOAD_HWM ? { flags: 'wx', highWaterMark: Number(process.env.UPLOAD_HWM) } : { flags: 'wx' };
let next = 0;

http
  .createServer(async (req, res) => {
    if (req.method !== 'PUT') return res.end('ok');
    const target = path.join(dir, path.basename(req.url));
    const temp = path.join(dir, `.${process.pid}-${next++}.part`);
    try {
      await pipeline(req, fs.createWriteStream(temp, options));
      await fs.promises.rename(temp, target);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ size: (await fs.promises.stat(target)).size }));
    } catch (error) {
      await fs.promises.rm(temp, { force: true });
      res.writeHead(500).end(String(error));
    }
  })
  .listen(Number(process.env.PORT), '127.0.0.1');
