/** What other modules may use of skills/: they import it from here only (ESLint rule ambient/import-through-index). */
export { SkillLastRuns } from './skill-last-runs';
export { SkillsModule } from './skills.module';
export { SkillsService } from './skills.service';
