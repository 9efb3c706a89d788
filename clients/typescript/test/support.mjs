/**
 * What the SDK's tests share: the running service (started by run-tests.sh with
 * clients/python/tests/serve.js and named by SVC_TEST_SERVICE, or started here when that is
 * not set), the sandbox checkout, real ONNX files written by onnx-proto (the repository's
 * devDependency, read from SVC_REPO_ROOT: the SDK itself does not need it), stub servers.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as http from 'node:http';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = process.env.SVC_REPO_ROOT ?? path.resolve(here, '../../..');
export const MIB = 1024 * 1024;
/** The sandbox checkout's card that pays (README, "Sell and buy in the sandbox"). */
export const PAYS = '4242424242424242';

let started;
let service;
/** `{ base_url, seller_key, buyer_key, admin_token }`. */
export async function theService() {
  if (service) return service;
  if (process.env.SVC_TEST_SERVICE) return (service = JSON.parse(process.env.SVC_TEST_SERVICE));
  started = spawn(process.execPath, [path.join(ROOT, 'clients/python/tests/serve.js')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const line = await new Promise((resolve, reject) => {
    let out = '';
    started.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.includes('\n')) resolve(out.split('\n')[0]);
    });
    started.once('exit', () => reject(new Error('serve.js did not start the service (its stderr says why)')));
  });
  return (service = JSON.parse(line));
}

export function stopService() {
  started?.stdin.end();
}

export const sha256 = (data) => createHash('sha256').update(data).digest('hex');

/** Posts the hosted checkout form as a browser without JavaScript does; the HTTP status. */
export async function pay(checkoutUrl, card = PAYS) {
  const res = await fetch(checkoutUrl, { method: 'POST', body: new URLSearchParams({ card_number: card }) });
  await res.arrayBuffer();
  return res.status;
}

/**
 * An ONNX model encoded by onnx-proto (the ModelProto writer): obs[batch,4] -> Gemm -> Tanh ->
 * Gemm -> action[batch,2], the hidden width giving the size (28 bytes a unit), weights from `seed`.
 */
export function onnxModel({ hidden = 8, seed = Math.random() } = {}) {
  const { onnx } = createRequire(path.join(ROOT, 'package.json'))('onnx-proto');
  const floats = (n, s) => {
    const raw = Buffer.alloc(n * 4);
    for (let i = 0; i < n; i++) raw.writeFloatLE(Math.sin(i + s + seed) / 4, i * 4);
    return raw;
  };
  const FLOAT = onnx.TensorProto.DataType.FLOAT;
  const info = (name, width) => ({ name, type: { tensorType: { elemType: FLOAT, shape: { dim: [{ dimParam: 'batch' }, { dimValue: width }] } } } });
  const model = {
    irVersion: 8,
    opsetImport: [{ domain: '', version: 13 }],
    producerName: 'robotics-marketplace-sdk-tests',
    producerVersion: '1',
    graph: {
      name: 'policy',
      node: [
        { opType: 'Gemm', input: ['obs', 'w0', 'b0'], output: ['h0'] },
        { opType: 'Tanh', input: ['h0'], output: ['h1'] },
        { opType: 'Gemm', input: ['h1', 'w1', 'b1'], output: ['action'] },
      ],
      initializer: [
        { name: 'w0', dims: [4, hidden], dataType: FLOAT, rawData: floats(4 * hidden, 1) },
        { name: 'b0', dims: [hidden], dataType: FLOAT, rawData: floats(hidden, 2) },
        { name: 'w1', dims: [hidden, 2], dataType: FLOAT, rawData: floats(hidden * 2, 3) },
        { name: 'b1', dims: [2], dataType: FLOAT, rawData: floats(2, 4) },
      ],
      input: [info('obs', 4)],
      output: [info('action', 2)],
    },
  };
  return Buffer.from(onnx.ModelProto.encode(onnx.ModelProto.fromObject(model)).finish());
}

/** An episode as JSON Lines, one object a step (written with JSON.stringify, a line each). */
export function jsonlEpisode(index, steps, noise) {
  return Buffer.from(Array.from({ length: steps }, (_, step) => `${JSON.stringify({ episode: index, step, noise: noise.toString('hex') })}\n`).join(''));
}

async function listen(server) {
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${server.address().port}`;
}

/** A webhook receiver keeping each delivery's raw body and svc-signature header, answering 204. */
export async function receiver() {
  const deliveries = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      deliveries.push({ body: Buffer.concat(chunks), header: req.headers['svc-signature'] });
      res.writeHead(204).end();
    });
  });
  const url = `${await listen(server)}/hooks`;
  return {
    url,
    deliveries,
    /** The first delivery whose event matches, waiting for it. */
    async waitFor(match, seconds = 30) {
      const deadline = Date.now() + seconds * 1000;
      while (Date.now() < deadline) {
        const found = deliveries.find((d) => match(JSON.parse(d.body.toString('utf8'))));
        if (found) return found;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`no matching delivery within ${seconds} s; got ${deliveries.length}`);
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/**
 * An HTTP server answering from a script, in turn: each entry `[status, body]`, or a function
 * of the request (`'hang'` to never answer); it records each request's method, url and headers.
 */
export async function stub(script) {
  const seen = [];
  const hanging = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers });
      let next = script.shift();
      if (typeof next === 'function') next = next(req);
      if (next === 'hang' || next === undefined) return hanging.push(res);
      const [status, body, headers = {}] = next;
      const data = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_${seen.length}`, ...headers });
      res.end(data);
    });
  });
  const url = await listen(server);
  return {
    url,
    seen,
    script,
    close: () => new Promise((resolve) => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections?.();
      server.close(resolve);
    }),
  };
}

export const apiError = (code) => ({ error: { code, message: code.replace(/_/g, ' ') } });

/**
 * A proxy to the service that loses the answers of the first `lose` requests: each is
 * forwarded and done by the service, then the connection to the client is cut before any
 * answer byte (a network fault after the work). It records each request's Idempotency-Key.
 */
export async function lossyProxy(target, lose = 1) {
  const seen = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      seen.push({ method: req.method, url: req.url, key: req.headers['idempotency-key'] });
      const headers = { ...req.headers };
      delete headers.host;
      delete headers.connection;
      const answer = await fetch(`${target}${req.url}`, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
      const body = Buffer.from(await answer.arrayBuffer());
      if (seen.length <= lose) return req.socket.destroy();
      const out = {};
      answer.headers.forEach((value, key) => {
        if (key !== 'content-encoding' && key !== 'transfer-encoding' && key !== 'content-length') out[key] = value;
      });
      res.writeHead(answer.status, out).end(body);
    });
  });
  const url = await listen(server);
  return { url, seen, close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(resolve); }) };
}
