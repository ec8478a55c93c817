/** What other modules may use of execution/: they import it from here only (ESLint rule ambient/import-through-index). */
export type { ChatMessage } from './harness/harness.types';
export { ClaudeStreamMapper } from './harness/vendors/claude-harness';
export { CodexStreamMapper } from './harness/vendors/codex-harness';
export { GeminiStreamMapper } from './harness/vendors/gemini-harness';
export type { StreamEvent, VendorStreamMapper } from './harness/vendors/vendor-stream';
export { SandboxModule } from './sandbox/sandbox.module';
export { SandboxService } from './sandbox/sandbox.service';
