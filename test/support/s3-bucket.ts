/**
 * A real S3-protocol server (`s3rver`) on a free local port with one bucket, for the tests that run
 * the file store against a bucket instead of the disk.
 */
import { join } from 'node:path';
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { S3FileStore } from '../../src/files/s3-filestore.js';

export interface TestBucket {
  /** The store writing to the bucket (under `prefix`). */
  store: S3FileStore;
  endpoint: string;
  close(): Promise<void>;
}

/** The client options of a store on the test server at `endpoint`. */
export function s3Options(endpoint: string) {
  return { endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } };
}

/** Starts a server keeping its data under `dir`/s3 and creates `bucket` on it. */
export async function startTestBucket(dir: string, bucket: string, prefix = ''): Promise<TestBucket> {
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: join(dir, 's3') });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const store = new S3FileStore(bucket, prefix, s3Options(endpoint));
  await (await store.client()).send(new CreateBucketCommand({ Bucket: bucket }));
  return { store, endpoint, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
