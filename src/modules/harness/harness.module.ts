import { Module } from '@nestjs/common';
import { SecretsModule } from '../secrets/secrets.module';
import { HarnessRegistry } from './harness-registry';
import { Harness, HARNESSES } from './harness.types';
import { OzHarness } from './oz-harness';
import { ClaudeHarness } from './vendors/claude-harness';
import { CodexHarness } from './vendors/codex-harness';
import { GeminiHarness } from './vendors/gemini-harness';
import { WorkspaceService } from './workspace.service';

const ALL_HARNESSES = [OzHarness, ClaudeHarness, CodexHarness, GeminiHarness];

@Module({
  imports: [SecretsModule],
  providers: [
    ...ALL_HARNESSES,
    WorkspaceService,
    HarnessRegistry,
    {
      provide: HARNESSES,
      inject: ALL_HARNESSES,
      useFactory: (...harnesses: Harness[]) => harnesses,
    },
  ],
  exports: [HarnessRegistry, WorkspaceService],
})
export class HarnessModule {}
