import { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { finished, PassThrough } from 'node:stream';
import { sendError } from '../platform/error-filter';
import { ApiError, Errors } from '../platform/errors';
import { ChecksumMismatchError, contentDisposition, isSafeObjectPath, MAX_PARTS, SHA256_HEX, UploadNotFoundError } from './blob-store';
import { stagingPathOf } from './mode-staging';
import { LocalBlobStore, ObjectTooLargeError, PartTooShortError } from './local-blob-store';
import { SignedFields } from './url-signature';

interface SignedQuery {
  method?: string;
  expires?: string;
  max_bytes?: string;
  file_name?: string;
  upload_id?: string;
  part_number?: string;
  sha256?: string;
  signature?: string;
}

const urlRefused = (why: string) => new ApiError(403, 'forbidden', `This storage URL is not valid: ${why}. Request a new one from the API.`);

/** Checks every signed part of the URL against the request actually made. */
function authorize(store: LocalBlobStore, request: FastifyRequest, method: 'GET' | 'PUT'): SignedFields {
  const objectPath = (request.params as Record<string, string>)['*'] ?? '';
  const q = request.query as SignedQuery;
  if (!isSafeObjectPath(objectPath) || q.method !== method || !/^\d+$/.test(q.expires ?? '') || typeof q.signature !== 'string') {
    throw urlRefused('it was not signed for this request');
  }
  if (method === 'PUT' && !/^\d+$/.test(q.max_bytes ?? '')) throw urlRefused('it was not signed for this request');
  if (q.sha256 !== undefined && (method !== 'PUT' || !SHA256_HEX.test(q.sha256))) throw urlRefused('it was not signed for this request');
  const isPart = method === 'PUT' && (q.upload_id !== undefined || q.part_number !== undefined);
  if (isPart && !(/^[0-9a-f]{24}$/.test(q.upload_id ?? '') && /^[1-9]\d*$/.test(q.part_number ?? '') && Number(q.part_number) <= MAX_PARTS)) {
    throw urlRefused('it was not signed for this request');
  }
  const fields: SignedFields =
    method === 'GET'
      ? { method, path: objectPath, expires: Number(q.expires), maxBytes: 0, fileName: q.file_name ?? '' }
      : isPart
        ? { method, path: objectPath, expires: Number(q.expires), maxBytes: Number(q.max_bytes), uploadId: q.upload_id, partNumber: Number(q.part_number) }
        : { method, path: objectPath, expires: Number(q.expires), maxBytes: Number(q.max_bytes), ...(q.sha256 !== undefined && { sha256: q.sha256 }) };
  const check = store.check(fields, q.signature);
  if (check === 'expired') throw urlRefused('it has expired');
  if (check === 'invalid') throw urlRefused('the signature does not match');
  return fields;
}

const tooLarge = (maxBytes: number) =>
  new ApiError(413, 'payload_too_large', `The upload is larger than the ${maxBytes} bytes this URL allows.`, { max_bytes: maxBytes });

const uploadGone = () =>
  new ApiError(404, 'not_found', 'This multipart upload was completed, aborted or has expired; start a new upload.');

/** One "bytes=a-b" range; multi-range requests are served whole (RFC 9110 allows ignoring Range). */
function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}

async function put(store: LocalBlobStore, request: FastifyRequest, reply: FastifyReply) {
  const fields = authorize(store, request, 'PUT');
  const declared = request.headers['content-length'];
  if (declared !== undefined && Number(declared) > fields.maxBytes) {
    reply.header('connection', 'close');
    throw tooLarge(fields.maxBytes);
  }
  // The request is piped through a PassThrough so a failed write unpipes it instead of
  // destroying the socket: the client still receives the 413.
  const body = new PassThrough();
  request.raw.pipe(body);
  // pipe() does not pass on a client that goes away mid-body: the PassThrough would never
  // end, and the write would hold its temp file and descriptor open for good.
  finished(request.raw, (error) => error && body.destroy(error));
  try {
    if (fields.uploadId === undefined) {
      const stored = await store.write(fields.path, body, fields.maxBytes, fields.sha256);
      return reply.status(200).send({ storage_path: stagingPathOf(stored.path), size: stored.size });
    }
    const part = await store.writePart(fields.path, fields.uploadId, fields.partNumber!, body, fields.maxBytes);
    // Quoted, as S3 answers it, so clients pass S3's and ours to completion alike.
    const etag = `"${part.etag}"`;
    return reply.status(200).header('etag', etag).send({ part_number: fields.partNumber, size: part.size, etag });
  } catch (error) {
    request.raw.unpipe(body);
    reply.header('connection', 'close');
    if (error instanceof ObjectTooLargeError) throw tooLarge(fields.maxBytes);
    if (error instanceof PartTooShortError) {
      // S3 signs a part's content-length and refuses any other; this mirrors it.
      throw Errors.validationFailed(`Part ${error.partNumber} is ${error.bytes} bytes, but its URL was signed for exactly ${error.size}; PUT the whole part again.`);
    }
    if (error instanceof UploadNotFoundError) throw uploadGone();
    if (error instanceof ChecksumMismatchError) {
      throw new ApiError(400, 'checksum_mismatch', `The upload was refused and nothing was stored: ${error.message}. PUT the file the URL was granted for.`);
    }
    throw error;
  }
}

async function get(store: LocalBlobStore, request: FastifyRequest, reply: FastifyReply) {
  const fields = authorize(store, request, 'GET');
  const object = await store.stat(fields.path);
  if (!object) throw Errors.notFound('object');
  const range = parseRange(request.headers.range, object.size);
  reply
    .header('accept-ranges', 'bytes')
    .header('content-type', 'application/octet-stream')
    .header('content-disposition', contentDisposition(fields.fileName || fields.path.slice(fields.path.lastIndexOf('/') + 1)));
  if (range === 'unsatisfiable') {
    reply.header('content-range', `bytes */${object.size}`);
    throw new ApiError(416, 'range_not_satisfiable', `The requested range is outside the object's ${object.size} bytes.`);
  }
  if (!range) return reply.status(200).header('content-length', object.size).send(store.read(fields.path));
  return reply
    .status(206)
    .header('content-range', `bytes ${range.start}-${range.end}/${object.size}`)
    .header('content-length', range.end - range.start + 1)
    .send(store.read(fields.path, range));
}

/**
 * The local store's signed URLs, as plain Fastify routes in their own plugin context:
 * they take raw bytes of any content type (the API's JSON-only parser does not apply
 * here) and authenticate by URL signature instead of an API key.
 */
export function localBlobRoutes(store: LocalBlobStore) {
  const logger = new Logger('Storage');
  return async (fastify: FastifyInstance): Promise<void> => {
    fastify.removeAllContentTypeParsers();
    // Hand the body over unread; the PUT handler streams request.raw itself.
    fastify.addContentTypeParser('*', (_request, _payload, done) => done(null));
    fastify.setErrorHandler((error, request, reply) => sendError(request, reply, error, logger));
    fastify.put('/storage/*', (request, reply) => put(store, request, reply));
    fastify.get('/storage/*', (request, reply) => get(store, request, reply));
  };
}
