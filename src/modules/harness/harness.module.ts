import { Module } from '@nestjs/common';
import { APP_CONFIG } from '../../config/app-config';
import { HarnessRegistry } from './harness-registry';
import { HARNESSES } from './harness.types';
import { createHarnesses } from './harnesses';
import { WorkspaceService } from './workspace.service';

@Module({
  providers: [
    WorkspaceService,
    HarnessRegistry,
    { provide: HARNESSES, inject: [APP_CONFIG], useFactory: createHarnesses },
  ],
  exports: [HarnessRegistry, WorkspaceService],
})
export class HarnessModule {}
