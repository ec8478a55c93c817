import { DynamicModule, Global, Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { BLOB_STORE } from './blob-store';
import { BlobsController } from './blobs.controller';
import { LocalDiskBlobStore } from './local-disk-blob-store';
import { UrlSigner } from './url-signer';

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
          useFactory: (config: AppConfig) => new LocalDiskBlobStore(config.blobs.root),
        },
      ],
      exports: [UrlSigner, BLOB_STORE],
    };
  }
}
