#!/usr/bin/env node
/**
 * Multipart upload throughput (issue 28): MiB/s of one file of N MiB uploaded through the
 * service's grant (POST /v1/uploads, the parts PUT to their presigned S3 URLs P at a time,
 * POST /v1/uploads/complete) against the same parts PUT straight to the gateway with the
 * AWS SDK (CreateMultipartUpload, UploadPart with the same part size and parallelism,
 * CompleteMultipartUpload), in the same run, on a real S3 server (Ceph's RADOS Gateway).
 * Goal: ratio >= 0.8. bench/upload.js runs this row after its own.
 *
 * The service (node dist/src/main.js, PGlite, S3 settings) runs in its own process; this
 * process is only the client. Each side is timed from its first request (the grant, or
 * CreateMultipartUpload) to the completion's answer. Both read every part from the same
 * source: one reused 64 KiB buffer pushed into a stream of the part's exact content-length.
 * Both have a keep-alive agent with a socket per parallel part. The SDK is spared the work
 * the presigned path does not do: no SHA-256 of each body (x-amz-content-sha256:
 * UNSIGNED-PAYLOAD, set by a build-step middleware, which the signer then uses), no
 * checksum (requestChecksumCalculation WHEN_REQUIRED), no wait for 100 Continue, no
 * retries. Each round uploads with both, the order alternating, after one warm-up upload
 * each; every completed object is checked with a HeadObject and deleted (then the Ceph
 * gateway's garbage collection is run, see S3_CEPH_CONF). Figures are medians over rounds.
 *
 *   node bench/upload-multipart.js [--json]     (npm run build first)
 * BENCH_MULTIPART_MIB (default 1024), BENCH_PARALLEL (default 4), BENCH_ROUNDS (default 3);
 * the part size is the service's (UPLOAD_PART_SIZE, default 64 MiB).
 *
 * The gateway: S3_ENDPOINT with S3_ACCESS_KEY_ID / S3_SECRET_ACCESS_KEY (or AWS_*), as
 * ../shared/tools/s3-rgw/start-s3.sh prints them; else one started for this run with that
 * script (a port and a temp directory of its own; stopped and purged after). Either way the
 * bench works in a bucket of its own, deleted after. Where neither is there, the row says
 * it was skipped and why. A Ceph gateway frees a deleted object's parts only in its garbage
 * collection (2 h later by default), and start-s3.sh's memstore holds 2 GiB: with
 * S3_CEPH_CONF (that gateway's ceph.conf; set for a gateway this bench starts) the bench
 * runs `radosgw-admin gc process --include-all` after each delete.
 */
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const os = require('node:os');
const path = require('node:path');
const { Readable } = require('node:stream');
const { promisify } = require('node:util');
const { ADMIN, median, startService } = require('./harness');

const MiB = 1024 * 1024;
const SIZE_MIB = Number(process.env.BENCH_MULTIPART_MIB || 1024);
const PARALLEL = Number(process.env.BENCH_PARALLEL || 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
/** Four parts of the default size, so each of the default four sockets carries one; above the default 100 MiB multipart threshold. */
const WARM_UP_MIB = Math.min(SIZE_MIB, 256);
const CHUNK = Buffer.alloc(64 * 1024, 0x5a);
const S3_TOOLS = path.join(__dirname, '../../shared/tools/s3-rgw');
const run = promisify(execFile);

async function api(base, method, route, token, body) {
  const res = await fetch(`${base}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const parsed = await res.json();
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

/**
 * The service with `env`, an account and a test-mode key made on it. Start-up catch-up
 * (migrations, the projections reading the new account and key) is not upload work: this
 * resolves once the read models are current, as in harness.makeKey.
 */
async function serviceWithKey(env) {
  const service = await startService(env, ADMIN);
  const account = await api(service.base, 'POST', '/admin/accounts', ADMIN, { name: 'Bench', email: 'bench@example.com' });
  const { key } = await api(service.base, 'POST', '/admin/keys', ADMIN, { account: account.id, mode: 'test' });
  for (let i = 0; ; i++) {
    const status = await api(service.base, 'GET', '/admin/projections', ADMIN);
    if (status.items.every((p) => !p.behind && !p.rebuilding)) break;
    if (i > 3000) throw new Error('the service did not catch up');
    await new Promise((r) => setTimeout(r, 100));
  }
  const stop = () => new Promise((r) => (service.child.exitCode !== null ? r() : (service.child.once('exit', r), service.child.kill('SIGTERM'))));
  return { base: service.base, key, stop };
}

/** `size` bytes of the one reused buffer, as a stream: the body of a part on both sides. */
function partBody(size) {
  let sent = 0;
  return new Readable({
    highWaterMark: CHUNK.length,
    read() {
      while (sent < size) {
        const piece = size - sent >= CHUNK.length ? CHUNK : CHUNK.subarray(0, size - sent);
        sent += piece.length;
        if (!this.push(piece)) return;
      }
      this.push(null);
    },
  });
}

/** Runs `work` on every item, at most `parallel` at a time, in order of the items; resolves to the results in that order. */
async function inParallel(items, parallel, work) {
  const results = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, items.length) }, async () => {
      for (let i = next++; i < items.length; i = next++) results[i] = await work(items[i]);
    }),
  );
  return results;
}

/** PUTs a part to its presigned URL with its exact content-length; resolves to the ETag. */
function putPart(url, size, agent) {
  return new Promise((resolve, reject) => {
    const req = (url.startsWith('https:') ? https : http).request(url, { method: 'PUT', agent, headers: { 'content-length': size } });
    req.on('error', reject);
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`part PUT ${res.statusCode}: ${body}`));
        if (!res.headers.etag) return reject(new Error('part PUT answered no ETag'));
        resolve(res.headers.etag);
      });
    });
    const body = partBody(size);
    body.on('error', reject);
    body.pipe(req);
  });
}

const onPath = (command) =>
  (process.env.PATH || '').split(path.delimiter).some((dir) => {
    try {
      fs.accessSync(path.join(dir, command), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });

const isConnectionFault = (error) =>
  /ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENOTFOUND|ETIMEDOUT|EAI_AGAIN|TimeoutError/.test(`${error?.code} ${error?.name} ${error?.message} ${error?.cause?.code}`);

/** A gateway to bench against: the one S3_ENDPOINT names, or one started for this run; or why there is none. */
async function gateway() {
  const env = process.env;
  if (env.S3_ENDPOINT) {
    const accessKeyId = env.S3_ACCESS_KEY_ID || env.AWS_ACCESS_KEY_ID;
    const secretAccessKey = env.S3_SECRET_ACCESS_KEY || env.AWS_SECRET_ACCESS_KEY;
    if (!accessKeyId || !secretAccessKey) return { skipped: 'S3_ENDPOINT is set but S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY (or AWS_*) are not' };
    return { endpoint: env.S3_ENDPOINT, credentials: { accessKeyId, secretAccessKey }, cephConf: env.S3_CEPH_CONF, started: false, stop: async () => {} };
  }
  const start = path.join(S3_TOOLS, 'start-s3.sh');
  const stop = path.join(S3_TOOLS, 'stop-s3.sh');
  if (!fs.existsSync(start) || !fs.existsSync(stop)) return { skipped: `no S3_ENDPOINT, and ${S3_TOOLS} (the RADOS Gateway scripts) is missing` };
  // start-s3.sh would install them with apt-get: a bench does not.
  for (const command of ['radosgw', 'radosgw-admin', 'ceph-mon', 'ceph-osd', 'uuidgen', 'curl']) {
    if (!onPath(command)) return { skipped: `no S3_ENDPOINT, and ${command} is not installed (apt-get install --no-install-recommends radosgw ceph-mon ceph-osd uuid-runtime curl)` };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-upload-s3-'));
  // The gateway takes PORT to PORT+15.
  const port = 40000 + Math.floor(Math.random() * 20000);
  const cleanEnv = Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith('S3_')));
  let line;
  try {
    const { stdout } = await run(start, [String(port), dir], { env: cleanEnv, timeout: 180_000 });
    line = stdout.trim().split('\n').pop();
  } catch (error) {
    await run(stop, [dir, '--purge']).catch(() => undefined);
    return { skipped: `no S3_ENDPOINT, and start-s3.sh failed: ${String(error.stderr || error.message).trim().split('\n').pop()}` };
  }
  const started = Object.fromEntries(line.split(' ').map((word) => word.split(/=(.*)/s).slice(0, 2)));
  return {
    endpoint: started.S3_ENDPOINT,
    credentials: { accessKeyId: started.S3_ACCESS_KEY_ID, secretAccessKey: started.S3_SECRET_ACCESS_KEY },
    cephConf: path.join(dir, 'ceph.conf'),
    started: true,
    stop: () => run(stop, [dir, '--purge']),
  };
}

/** The SDK as the baseline uses it: nothing the presigned path does not do (see the top of this file). */
function sdkClient(S3, gw, agents) {
  const client = new S3.S3Client({
    region: 'us-east-1',
    endpoint: gw.endpoint,
    forcePathStyle: true,
    credentials: gw.credentials,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    expectContinueHeader: false,
    maxAttempts: 1,
    requestHandler: { httpAgent: agents.http, httpsAgent: agents.https },
  });
  client.middlewareStack.add(
    (next) => async (args) => {
      if (args.request?.headers) args.request.headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
      return next(args);
    },
    { step: 'build', name: 'unsignedPayload' },
  );
  return client;
}

/** The multipart row: its figures, or `{ skipped }` saying why there are none. */
async function multipartRow() {
  const gw = await gateway();
  if (gw.skipped) return { bench: 'upload-multipart', skipped: gw.skipped };
  const S3 = require('@aws-sdk/client-s3');
  const agent = () => ({ http: new http.Agent({ keepAlive: true, maxSockets: PARALLEL }), https: new https.Agent({ keepAlive: true, maxSockets: PARALLEL }) });
  const sdkAgents = agent();
  const presignedAgents = agent();
  const presignedAgent = gw.endpoint.startsWith('https:') ? presignedAgents.https : presignedAgents.http;
  const s3 = sdkClient(S3, gw, sdkAgents);
  const bucket = `bench-multipart-${process.pid}-${Date.now().toString(36)}`;
  const release = async () => {
    s3.destroy();
    for (const a of [sdkAgents, presignedAgents]) (a.http.destroy(), a.https.destroy());
    await gw.stop().catch((error) => console.error(`upload-multipart: stop-s3.sh: ${error.message}`));
  };
  try {
    await s3.send(new S3.CreateBucketCommand({ Bucket: bucket }));
  } catch (error) {
    await release();
    if (!isConnectionFault(error)) throw error;
    return { bench: 'upload-multipart', skipped: `the gateway at ${gw.endpoint} did not answer (${error.code || error.name}: ${error.message})` };
  }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-upload-mp-svc-'));
  let service;
  const collectGarbage = async () => {
    if (gw.cephConf) await run('radosgw-admin', ['-c', gw.cephConf, 'gc', 'process', '--include-all'], { timeout: 120_000 });
  };
  try {
    if (!gw.cephConf) {
      console.error(`upload-multipart: no S3_CEPH_CONF: a Ceph gateway keeps the deleted objects' parts until its garbage collection (${((ROUNDS + 1) * 2 * SIZE_MIB)} MiB in all)`);
    }
    service = await serviceWithKey({
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      S3_BUCKET: bucket,
      S3_ENDPOINT: gw.endpoint,
      S3_FORCE_PATH_STYLE: 'true',
      S3_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: gw.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: gw.credentials.secretAccessKey,
    });
    let n = 0;
    let partSize;
    /** Checks the object landed whole, deletes it and frees its parts: not timed. */
    const checkAndDelete = async (key, size) => {
      const head = await s3.send(new S3.HeadObjectCommand({ Bucket: bucket, Key: key }));
      if (head.ContentLength !== size) throw new Error(`${key} is ${head.ContentLength} bytes, not ${size}`);
      await s3.send(new S3.DeleteObjectCommand({ Bucket: bucket, Key: key }));
      await collectGarbage();
    };
    const ours = async (mib) => {
      const size = mib * MiB;
      const started = process.hrtime.bigint();
      const grant = await api(service.base, 'POST', '/v1/uploads', service.key, { file_name: `bench-${n++}.bag`, file_size: size });
      const { multipart } = grant;
      if (!multipart) throw new Error(`a grant of ${mib} MiB has no multipart: BENCH_MULTIPART_MIB must be above UPLOAD_MULTIPART_THRESHOLD`);
      if (partSize !== undefined && multipart.part_size !== partSize) throw new Error(`the service granted parts of ${multipart.part_size} bytes, then ${partSize}`);
      partSize = multipart.part_size;
      const etags = await inParallel(multipart.parts, PARALLEL, (p) => putPart(p.url, p.size, presignedAgent));
      const parts = multipart.parts.map((p, i) => ({ part_number: p.part_number, etag: etags[i] }));
      const done = await api(service.base, 'POST', '/v1/uploads/complete', service.key, { storage_path: grant.storage_path, upload_id: multipart.upload_id, parts });
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (done.size !== size) throw new Error(`the service completed ${done.size} bytes of ${size}`);
      // The bucket key (test mode's are under test/), as the part URLs name it.
      const key = decodeURIComponent(new URL(multipart.parts[0].url).pathname.slice(`/${bucket}/`.length));
      await checkAndDelete(key, size);
      return { seconds, parts: multipart.part_count };
    };
    const sdk = async (mib) => {
      const size = mib * MiB;
      const key = `bench/sdk-${n++}.bag`;
      const parts = Array.from({ length: Math.ceil(size / partSize) }, (_, i) => ({ number: i + 1, size: Math.min(partSize, size - i * partSize) }));
      const started = process.hrtime.bigint();
      const { UploadId } = await s3.send(new S3.CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
      try {
        const etags = await inParallel(parts, PARALLEL, async (p) => {
          const out = await s3.send(new S3.UploadPartCommand({ Bucket: bucket, Key: key, UploadId, PartNumber: p.number, ContentLength: p.size, Body: partBody(p.size) }));
          return out.ETag;
        });
        await s3.send(
          new S3.CompleteMultipartUploadCommand({
            Bucket: bucket, Key: key, UploadId, MultipartUpload: { Parts: parts.map((p, i) => ({ PartNumber: p.number, ETag: etags[i] })) },
          }),
        );
      } catch (error) {
        await s3.send(new S3.AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId })).catch(() => undefined);
        throw error;
      }
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      await checkAndDelete(key, size);
      return { seconds, parts: parts.length };
    };
    const targets = { ours, sdk };
    const samples = { ours: [], sdk: [] };
    const loadavg = os.loadavg();
    // One-time costs (JIT, the first connections, the gateway's first writes) are not charged
    // to a round. The service goes first: its grant says the part size the SDK then uses.
    await ours(WARM_UP_MIB);
    await sdk(WARM_UP_MIB);
    let partCount;
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ['ours', 'sdk'] : ['sdk', 'ours'];
      for (const which of order) {
        const { seconds, parts } = await targets[which](SIZE_MIB);
        if (partCount !== undefined && parts !== partCount) throw new Error(`${which} used ${parts} parts, the other ${partCount}`);
        partCount = parts;
        samples[which].push(SIZE_MIB / seconds);
      }
    }
    const round1 = (x) => +x.toFixed(1);
    const result = {
      bench: 'upload-multipart',
      node: process.version,
      gateway: `${gw.endpoint}${gw.started ? ' (started for this run)' : ''}`,
      mib: SIZE_MIB,
      part_mib: +(partSize / MiB).toFixed(2),
      parts: partCount,
      parallel: PARALLEL,
      rounds: ROUNDS,
      loadavg_before: loadavg.map((x) => +x.toFixed(2)),
      loadavg_after: os.loadavg().map((x) => +x.toFixed(2)),
      ours_mib_per_s: round1(median(samples.ours)),
      baseline_mib_per_s: round1(median(samples.sdk)),
      ours_samples: samples.ours.map(round1),
      baseline_samples: samples.sdk.map(round1),
    };
    result.ratio = +(result.ours_mib_per_s / result.baseline_mib_per_s).toFixed(2);
    return result;
  } finally {
    if (service) await service.stop();
    await emptyAndDelete(S3, s3, bucket).catch((error) => console.error(`upload-multipart: could not delete bucket ${bucket}: ${error.message}`));
    await collectGarbage().catch((error) => console.error(`upload-multipart: radosgw-admin gc process: ${error.message}`));
    await release();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Whatever a failed round left (unfinished uploads, objects), then the bucket. */
async function emptyAndDelete(S3, s3, bucket) {
  let uploads;
  try {
    uploads = await s3.send(new S3.ListMultipartUploadsCommand({ Bucket: bucket }));
  } catch (error) {
    if (error.name === 'NoSuchBucket') return;
    throw error;
  }
  for (const u of uploads.Uploads ?? []) await s3.send(new S3.AbortMultipartUploadCommand({ Bucket: bucket, Key: u.Key, UploadId: u.UploadId }));
  const objects = await s3.send(new S3.ListObjectsV2Command({ Bucket: bucket }));
  for (const o of objects.Contents ?? []) await s3.send(new S3.DeleteObjectCommand({ Bucket: bucket, Key: o.Key }));
  await s3.send(new S3.DeleteBucketCommand({ Bucket: bucket }));
}

/** The row as bench/upload.js prints its own. */
function printMultipart(r) {
  if (r.skipped) return console.log(`multipart upload SKIPPED: ${r.skipped}`);
  console.log(
    `Multipart upload of ${r.mib} MiB (${r.parts} parts of ${r.part_mib} MiB, ${r.parallel} at a time) to ${r.gateway}, median of ${r.rounds} rounds` +
      ` (load average before ${r.loadavg_before.join(' ')}, after ${r.loadavg_after.join(' ')})`,
  );
  console.log(`  service grant + presigned parts + complete  ${r.ours_mib_per_s} MiB/s   (${r.ours_samples.join(', ')})`);
  console.log(`  AWS SDK straight to the gateway             ${r.baseline_mib_per_s} MiB/s   (${r.baseline_samples.join(', ')})`);
  console.log(`  ratio ${r.ratio} (goal >= 0.8)`);
}

module.exports = { api, multipartRow, printMultipart, sdkClient, serviceWithKey };

if (require.main === module) {
  multipartRow()
    .then((result) => (process.argv.includes('--json') ? console.log(JSON.stringify(result)) : printMultipart(result)))
    .catch((error) => {
      console.error(error);
      process.exit(1);
    });
}
