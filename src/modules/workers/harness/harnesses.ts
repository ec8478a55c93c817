import { EgressGuard } from '../../../common/egress/egress-guard';
import type { AppConfig } from '../../../config/app-config';
import type { Harness } from './harness.types';
import { OzHarness } from './oz-harness';
import { ClaudeHarness } from './vendors/claude-harness';
import { CodexHarness } from './vendors/codex-harness';
import { GeminiHarness } from './vendors/gemini-harness';

/** Every harness a run may choose, for Ambient's workers and the self-hosted worker program. */
export function createHarnesses(config: Pick<AppConfig, 'vendorClis' | 'egress'>): Harness[] {
  return [
    new OzHarness(EgressGuard.fromSetting(config.egress.allow)),
    new ClaudeHarness(config),
    new GeminiHarness(config),
    new CodexHarness(config),
  ];
}
