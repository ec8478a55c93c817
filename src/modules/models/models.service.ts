import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from '../../common/errors/api-error';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { CatalogModel, loadModelCatalog, ModelCatalog } from './model-catalog';

@Injectable()
export class ModelsService {
  readonly catalog: ModelCatalog;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.catalog = loadModelCatalog(config.models.file);
  }

  find(id: string): CatalogModel | undefined {
    return this.catalog.models.find((m) => m.id === id);
  }

  /** The model a run will use; refuses unknown and disabled models naming the field. */
  resolveForRun(modelId: string | undefined, field = 'config.model_id'): CatalogModel {
    const id = modelId ?? this.catalog.defaultModelId;
    const model = this.find(id);
    if (!model) {
      throw ApiError.invalid(
        field,
        `unknown model "${id}"; GET /agent/models lists the models available`,
      );
    }
    if (model.disableReason) {
      throw ApiError.invalid(field, `model "${id}" is unavailable: ${model.disableDetail}`);
    }
    return model;
  }
}
