/** What other modules may use of blobs/: they import it from here only (ESLint rule ambient/import-through-index). */
export { BLOB_STORE } from './blob-store';
export type { BlobStore } from './blob-store';
export { LocalDiskBlobStore } from './local-disk-blob-store';
export { setDownloadHeaders, signedGrant } from './blobs.controller';
export { UrlSigner } from './url-signer';
export type { DownloadGrant, SignedUrl } from './url-signer';
