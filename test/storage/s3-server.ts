import { CreateBucketCommand, DeleteBucketCommand, DeleteObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { S3Settings } from '../../src/config/settings';

export interface S3TestServer {
  /** Settings env for the service: S3 on this server. */
  env: Record<string, string>;
  close(): Promise<void>;
}

/**
 * TEST_S3=1 (the S3 pass of .ci/run): storage on an external, signature-checking S3 server
 * named in the environment of `npm test` (S3_ENDPOINT, S3_BUCKET, S3_ACCESS_KEY_ID and
 * S3_SECRET_ACCESS_KEY, as ../shared/tools/s3-rgw/start-s3.sh prints them; AWS_* keys also
 * read). Only this switch lets those variables reach the service under test: everywhere
 * else the suites pass loadSettings an env of their own.
 */
export const onExternalS3 = process.env.TEST_S3 === '1';

/** Why the suites that need a signature-checking S3 server are skipped (shown in their names). */
export const EXTERNAL_S3_SKIP_REASON = 'skipped: needs TEST_S3=1 and a signature-checking S3 server (.ci/run starts one for its S3 pass)';

function externalS3(): { endpoint: string; bucket: string; region: string; forcePathStyle: string; accessKeyId: string; secretAccessKey: string } {
  const env = process.env;
  const endpoint = env.S3_ENDPOINT;
  const bucket = env.S3_BUCKET;
  const accessKeyId = env.S3_ACCESS_KEY_ID ?? env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.S3_SECRET_ACCESS_KEY ?? env.AWS_SECRET_ACCESS_KEY;
  if (!endpoint || !bucket || !accessKeyId || !secretAccessKey) {
    throw new Error('TEST_S3=1 needs S3_ENDPOINT, S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY in the environment');
  }
  return { endpoint, bucket, accessKeyId, secretAccessKey, region: env.S3_REGION ?? 'us-east-1', forcePathStyle: env.S3_FORCE_PATH_STYLE ?? 'true' };
}

/** An SDK client of the service's S3 settings, for tests that write behind its back. */
export function s3ClientFor(settings: S3Settings): S3Client {
  return new S3Client({
    region: settings.region,
    endpoint: settings.endpoint,
    forcePathStyle: settings.forcePathStyle,
    credentials: settings.credentials,
    requestChecksumCalculation: 'WHEN_REQUIRED',
  });
}

let buckets = 0;

/**
 * A bucket of its own on the external server, so suites running side by side never share a
 * key (published/<sha256> is content-addressed, and tests overwrite such keys on purpose).
 * Named after the server's bucket; emptied and deleted by close().
 */
async function externalS3Bucket(): Promise<S3TestServer> {
  const s3 = externalS3();
  const bucket = `${s3.bucket}-${process.pid}-${++buckets}-${randomBytes(3).toString('hex')}`.toLowerCase().slice(0, 63);
  const env = {
    S3_ENDPOINT: s3.endpoint,
    S3_BUCKET: bucket,
    S3_REGION: s3.region,
    S3_FORCE_PATH_STYLE: s3.forcePathStyle,
    AWS_ACCESS_KEY_ID: s3.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
  };
  const client = s3ClientFor({ bucket, region: s3.region, endpoint: s3.endpoint, forcePathStyle: s3.forcePathStyle === 'true', credentials: s3 });
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  return {
    env,
    async close() {
      let token: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
        await Promise.all((page.Contents ?? []).map((o) => client.send(new DeleteObjectCommand({ Bucket: bucket, Key: o.Key }))));
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      await client.send(new DeleteBucketCommand({ Bucket: bucket }));
      client.destroy();
    },
  };
}

/**
 * A real S3-protocol server for one suite: a fresh bucket on the external server in the S3
 * pass (TEST_S3=1), otherwise s3rver in this process on 127.0.0.1 and a free port (it checks
 * expiry but no signature).
 */
export async function startS3Server(bucket = 'catalog'): Promise<S3TestServer> {
  if (onExternalS3) return externalS3Bucket();
  // s3rver ships no type declarations, hence require.
  const S3rver = require('s3rver');
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 's3rver-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  return {
    env: {
      S3_ENDPOINT: `http://127.0.0.1:${port}`,
      S3_BUCKET: bucket,
      S3_REGION: 'us-east-1',
      S3_FORCE_PATH_STYLE: 'true',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
    },
    async close() {
      await server.close();
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}
