/** What other modules may use of models/: they import it from here only (ESLint rule ambient/import-through-index). */
export type { CatalogModel, ProviderApi, ProviderEndpoint } from './model-catalog';
export { ModelsModule } from './models.module';
export { ModelsService } from './models.service';
