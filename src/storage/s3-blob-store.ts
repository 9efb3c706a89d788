import { CopyObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3Settings } from '../config/settings';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assertUploadable, BlobStore, contentDisposition, Digest, FrozenObject, ObjectChangedError, publishedPath, SignedUpload, StoredObject } from './blob-store';

const isNotFound = (error: unknown): boolean => {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NotFound' || e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404;
};

/**
 * Objects in an S3 bucket (or any S3-protocol server), credentials from AWS_ACCESS_KEY_ID /
 * AWS_SECRET_ACCESS_KEY or the standard provider chain. A presigned PUT cannot cap a body's size by itself, so the upload URL
 * signs the content-length header: S3 refuses a body of any other length, and the
 * publish step re-checks the landed size against the declared one.
 */
export class S3BlobStore implements BlobStore {
  constructor(private readonly client: S3Client, private readonly bucket: string) {}

  static fromSettings(settings: S3Settings): S3BlobStore {
    const client = new S3Client({
      region: settings.region,
      endpoint: settings.endpoint,
      forcePathStyle: settings.forcePathStyle,
      credentials: settings.credentials,
      // Otherwise the SDK presigns a checksum of an empty body into every PUT URL, and S3
      // refuses the real bytes.
      requestChecksumCalculation: 'WHEN_REQUIRED',
    });
    return new S3BlobStore(client, settings.bucket);
  }

  async signUpload(path: string, options: { expiresIn: number; maxBytes: number }): Promise<SignedUpload> {
    assertUploadable(path);
    const url = await getSignedUrl(
      this.client,
      new PutObjectCommand({ Bucket: this.bucket, Key: path, ContentLength: options.maxBytes }),
      { expiresIn: options.expiresIn, signableHeaders: new Set(['content-length']) },
    );
    return { url, token: new URL(url).searchParams.get('X-Amz-Signature') ?? '', expiresIn: options.expiresIn };
  }

  signDownload(path: string, options: { expiresIn: number; fileName: string }): Promise<string> {
    return getSignedUrl(
      this.client,
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: path,
        ResponseContentDisposition: contentDisposition(options.fileName),
      }),
      { expiresIn: options.expiresIn },
    );
  }

  async put(path: string, bytes: Uint8Array): Promise<StoredObject> {
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: path, Body: bytes, ContentLength: bytes.length }));
    return { path, size: bytes.length };
  }

  async stat(path: string): Promise<StoredObject | undefined> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: path }));
      return { path, size: head.ContentLength ?? 0 };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /**
   * Hashes the object as one GET streams it, then copies it server-side on condition that
   * its ETag is still the one hashed (x-amz-copy-source-if-match), so the copy holds the
   * bytes hashed or fails. A single CopyObject takes objects up to 5 GiB, the upload cap.
   */
  async freeze(path: string): Promise<FrozenObject | undefined> {
    let source;
    try {
      source = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: path }));
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
    const digest = new Digest();
    await pipeline(source.Body as Readable, digest, new Writable({ write: (_chunk, _encoding, done) => done() }));
    const frozen = publishedPath(digest.sha256);
    try {
      await this.client.send(
        // Keys are safe segments ([A-Za-z0-9._-]), so the copy source needs no encoding.
        new CopyObjectCommand({ Bucket: this.bucket, Key: frozen, CopySource: `${this.bucket}/${path}`, CopySourceIfMatch: source.ETag }),
      );
    } catch (error) {
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === 412 || isNotFound(error)) throw new ObjectChangedError(path);
      throw error;
    }
    return { path: frozen, size: digest.size, sha256: digest.sha256 };
  }

  async list(prefix: string): Promise<StoredObject[]> {
    const found: StoredObject[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const object of page.Contents ?? []) {
        if (object.Key) found.push({ path: object.Key, size: object.Size ?? 0 });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }
}
