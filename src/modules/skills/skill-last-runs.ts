/**
 * Reads when a team last ran each skill. The runs module provides it (runs imports skills, so
 * skills names only this port; the app wires the two in SkillsApiModule.withRuns).
 */
export abstract class SkillLastRuns {
  /** When the team last started a run of each skill spec (runs without a skill left out). */
  abstract lastRunBySkillSpec(teamId: string): Promise<Map<string, Date>>;
}
