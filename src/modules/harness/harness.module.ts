import { Module } from '@nestjs/common';
import { HarnessRegistry } from './harness-registry';
import { HARNESSES } from './harness.types';
import { OzHarness } from './oz-harness';
import { WorkspaceService } from './workspace.service';

@Module({
  providers: [
    OzHarness,
    WorkspaceService,
    HarnessRegistry,
    { provide: HARNESSES, inject: [OzHarness], useFactory: (oz: OzHarness) => [oz] },
  ],
  exports: [HarnessRegistry, WorkspaceService],
})
export class HarnessModule {}
