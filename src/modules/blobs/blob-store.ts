/** A stored blob as read back: its bytes and size. */
export interface StoredBlob {
  data: Buffer;
  size: number;
}

/**
 * Where transcripts and artifact files live. Keys are `<namespace>/<name>`, both parts of
 * [A-Za-z0-9._-] and not starting with a dot. Local disk is the default implementation.
 */
export interface BlobStore {
  put(key: string, data: Buffer | string): Promise<void>;
  get(key: string): Promise<StoredBlob | null>;
  exists(key: string): Promise<boolean>;
}

export const BLOB_STORE = Symbol('BLOB_STORE');

const PART = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

/** True for a well-formed key; anything else (dot segments, slashes in parts) is refused. */
export function isValidBlobKey(key: string): boolean {
  const parts = key.split('/');
  return parts.length === 2 && parts.every((p) => PART.test(p));
}
