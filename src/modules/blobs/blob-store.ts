import type { Readable } from 'node:stream';

/** A stored blob as read back: its bytes and size. */
export interface StoredBlob {
  data: Buffer;
  size: number;
}

/** A stored blob opened for reading, for downloads too large to hold in memory. */
export interface BlobStream {
  stream: Readable;
  size: number;
}

/**
 * Where transcripts and artifact files live. Keys are `<namespace>/<name>`, both parts of
 * [A-Za-z0-9._-] and not starting with a dot. Local disk is the default implementation; an S3
 * bucket (or any S3-compatible store) the other (`AMBIENT_BLOB_DRIVER`).
 */
export interface BlobStore {
  put(key: string, data: Buffer | string): Promise<void>;
  /** null when there is no such blob. */
  get(key: string): Promise<StoredBlob | null>;
  /** null when there is no such blob. */
  openStream(key: string): Promise<BlobStream | null>;
  exists(key: string): Promise<boolean>;
  /** Deletes the blob; a blob that is not there is no error (a retried deletion). */
  delete(key: string): Promise<void>;
}

export const BLOB_STORE = Symbol('BLOB_STORE');

const PART = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

/** True for a well-formed key; anything else (dot segments, slashes in parts) is refused. */
export function isValidBlobKey(key: string): boolean {
  const parts = key.split('/');
  return parts.length === 2 && parts.every((p) => PART.test(p));
}
