import { Module } from '@nestjs/common';
import { WorkspaceService } from './workspace.service';

/** The harness registry itself comes from the ExtensionsModule (built-ins register there). */
@Module({
  providers: [WorkspaceService],
  exports: [WorkspaceService],
})
export class HarnessModule {}
