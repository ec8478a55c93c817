import { DynamicModule, Global, Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { BLOB_STORE, BlobStore } from './blob-store';
import { BlobsController } from './blobs.controller';
import { LocalDiskBlobStore } from './local-disk-blob-store';
import { S3BlobStore } from './s3-blob-store';
import { UrlSigner } from './url-signer';

/** The store `AMBIENT_BLOB_DRIVER` names. */
export function createBlobStore(config: AppConfig): BlobStore {
  const { driver, root, s3 } = config.blobs;
  if (driver === 's3') return new S3BlobStore({ ...s3, bucket: s3.bucket! });
  return new LocalDiskBlobStore(root);
}

/** Blob storage and signed download URLs, available everywhere; the API role serves downloads. */
@Global()
@Module({})
export class BlobsModule {
  static forRoles(api: boolean): DynamicModule {
    return {
      module: BlobsModule,
      controllers: api ? [BlobsController] : [],
      providers: [
        UrlSigner,
        {
          provide: BLOB_STORE,
          inject: [APP_CONFIG],
          useFactory: (config: AppConfig) => createBlobStore(config),
        },
      ],
      exports: [UrlSigner, BLOB_STORE],
    };
  }
}
