import { ConfigError } from './config-error';
import type { Setting } from './setting-values';

export const BLOB_DRIVERS = ['local', 's3'] as const;
export type BlobDriver = (typeof BLOB_DRIVERS)[number];

/** The S3-compatible bucket of the `s3` blob driver. */
export interface S3Settings {
  bucket?: string;
  region: string;
  /** For S3-compatible services (MinIO, Ceph, R2…); unset = AWS. */
  endpoint?: string;
  forcePathStyle: boolean;
  /** Prepended to every object key (`<prefix>/<namespace>/<name>`). */
  prefix?: string;
  /** Unset = the AWS SDK's default credential chain (environment, profile, instance role). */
  accessKeyId?: string;
  secretAccessKey?: string;
}

/** The blob store's settings, and where generated key files (the URL signing key's) live. */
export const BLOB_SETTINGS: Setting[] = [
  { path: 'blobs.driver', env: 'AMBIENT_BLOB_DRIVER', kind: 'string', oneOf: BLOB_DRIVERS },
  { path: 'blobs.root', env: 'AMBIENT_BLOB_ROOT', kind: 'string' },
  { path: 'blobs.s3.bucket', env: 'AMBIENT_S3_BUCKET', kind: 'string', optional: true },
  { path: 'blobs.s3.region', env: 'AMBIENT_S3_REGION', kind: 'string' },
  { path: 'blobs.s3.endpoint', env: 'AMBIENT_S3_ENDPOINT', kind: 'url', optional: true },
  { path: 'blobs.s3.forcePathStyle', env: 'AMBIENT_S3_FORCE_PATH_STYLE', kind: 'bool' },
  { path: 'blobs.s3.prefix', env: 'AMBIENT_S3_PREFIX', kind: 'string', optional: true },
  { path: 'blobs.s3.accessKeyId', env: 'AMBIENT_S3_ACCESS_KEY_ID', kind: 'string', optional: true },
  {
    path: 'blobs.s3.secretAccessKey',
    env: 'AMBIENT_S3_SECRET_ACCESS_KEY',
    kind: 'string',
    optional: true,
  },
  { path: 'blobs.signingKey', env: 'AMBIENT_URL_SIGNING_KEY', kind: 'string', optional: true },
  { path: 'keys.dir', env: 'AMBIENT_KEY_DIR', kind: 'string' },
  { path: 'blobs.urlTtlSeconds', env: 'AMBIENT_SIGNED_URL_TTL_SECONDS', kind: 'int', min: 1 },
];

export function checkS3Settings(blobs: BlobSettings): void {
  const { s3 } = blobs;
  if (blobs.driver === 's3' && !s3.bucket) {
    throw new ConfigError('AMBIENT_S3_BUCKET: missing (required with AMBIENT_BLOB_DRIVER=s3)');
  }
  if (Boolean(s3.accessKeyId) !== Boolean(s3.secretAccessKey)) {
    throw new ConfigError(
      'AMBIENT_S3_ACCESS_KEY_ID, AMBIENT_S3_SECRET_ACCESS_KEY: set both or neither',
    );
  }
  if (s3.prefix !== undefined && !/^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/.test(s3.prefix)) {
    throw new ConfigError(
      'AMBIENT_S3_PREFIX: letters, digits, ".", "_", "-" in "/"-separated parts, no leading or trailing "/"',
    );
  }
}

/** The key that signed every download URL before keys were generated; refused so it stays dead. */
const RETIRED_URL_SIGNING_KEY = 'ambient-dev-url-signing-key';

export function checkUrlSigningKey(key: string, name = 'AMBIENT_URL_SIGNING_KEY'): void {
  if (key.trim() === RETIRED_URL_SIGNING_KEY) {
    throw new ConfigError(
      `${name}: is the old well-known development key; set a random one (\`openssl rand -base64 32\`) or unset it to use a generated key file`,
    );
  }
  if (key.trim().length < 16) {
    throw new ConfigError(
      `${name}: must be at least 16 characters (e.g. \`openssl rand -base64 32\`)`,
    );
  }
}

/** AMBIENT_BLOB_DRIVER and the settings of each driver (`blobs` of AppConfig). */
export interface BlobSettings {
  driver: BlobDriver;
  /** Local-disk driver: the directory. */
  root: string;
  /**
   * AMBIENT_URL_SIGNING_KEY (HMAC key of download URLs). Unset after loadConfig when the
   * environment has none: provideKeys (key-files.ts) then reads or creates its key file.
   */
  signingKey?: string;
  urlTtlSeconds: number;
  s3: S3Settings;
}
