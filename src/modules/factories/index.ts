/** What other modules may use of factories/: they import it from here only (ESLint rule ambient/import-through-index). */
export { AutomationStore } from './automation-store.service';
export { DefinitionApplier } from './definition-applier.service';
export type { ApplyResult } from './definition-applier.service';
export { sendInvalidDefinition } from './definition-response';
export type { Diagnostic } from './definition/diagnostics';
export { Automation } from './entities/automation.entity';
export { Factory } from './entities/factory.entity';
export { FactoriesModule } from './factories.module';
export { FactoriesService, assertManaged } from './factories.service';
export { assertCanManage } from './factory-permissions';
