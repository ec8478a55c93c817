/** What an environment shows of the latest run in it. */
export interface EnvironmentLatestRun {
  id: string;
  title: string;
  /** The run's state as the API names it (QUEUED, INPROGRESS, …). */
  state: string;
  createdAt: Date;
  updatedAt: Date;
  startedAt: Date | null;
}

/**
 * Reads each environment's latest run. The runs module provides it (runs imports environments,
 * so environments names only this port; the app wires the two in EnvironmentsApiModule.withRuns).
 */
export abstract class EnvironmentLatestRuns {
  /** The team's latest run in each of the environments that has one, by environment id. */
  abstract latestByEnvironment(
    teamId: string,
    environmentIds: string[],
  ): Promise<Map<string, EnvironmentLatestRun>>;
}
