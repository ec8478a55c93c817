import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiProblems } from '../../common/errors/problem.schema';
import { ModelsService } from './models.service';
import { ListModelsResponseDto, ModelInfoDto } from './models.dto';
import { RequirePermission } from '../../common/auth/require-permission.decorator';

@ApiTags('agent')
@ApiBearerAuth()
@Controller('agent/models')
export class ModelsController {
  constructor(private readonly models: ModelsService) {}

  @Get()
  @RequirePermission('models.read')
  @ApiOperation({ operationId: 'listModels', summary: 'List available models' })
  @ApiOkResponse({ type: ListModelsResponseDto })
  @ApiProblems(401)
  list(): ListModelsResponseDto {
    const { defaultModelId, models } = this.models.catalog;
    return {
      default_model_id: defaultModelId,
      models: models.map((m): ModelInfoDto => ({
        id: m.id,
        display_name: m.displayName,
        provider: m.provider.kind,
        vision_supported: m.visionSupported,
        ...(m.description ? { description: m.description } : {}),
        ...(m.reasoningLevel ? { reasoning_level: m.reasoningLevel } : {}),
        ...(m.disableReason
          ? { disable_reason: m.disableReason, disable_detail: m.disableDetail }
          : {}),
        ...(m.missingProviderKey
          ? { missing_provider_key: true, provider_key_env: m.missingProviderKey }
          : {}),
        disabled: !!m.disableReason,
        input_cost_per_token_usd: m.inputCostPerTokenUsd,
        output_cost_per_token_usd: m.outputCostPerTokenUsd,
      })),
    };
  }
}
