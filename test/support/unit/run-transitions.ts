import type { Provider } from '@nestjs/common';
import {
  RunEventRepository,
  RunFollowupRepository,
  RunTransitionRepository,
  RunTransitions,
  RunUsageRepository,
} from '../../../src/modules/runs';

/** A real RunTransitions and the repositories its statements go through (specs on a test database). */
export const realRunTransitions: Provider[] = [
  RunTransitions,
  RunTransitionRepository,
  RunEventRepository,
  RunFollowupRepository,
  RunUsageRepository,
];
