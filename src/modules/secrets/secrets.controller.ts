import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal } from '../../common/auth/principal.decorator';
import { ApiProblems } from '../../common/errors/problem.schema';
import { toRfc3339 } from '../../common/time';
import type { Principal } from '../../common/auth/principal';
import {
  CreateSecretDto,
  ListSecretsResponseDto,
  SecretDto,
  SecretScopeDto,
  UpdateSecretDto,
} from './dto/secret.dto';
import type { SecretScope } from './secret-scope';
import { TeamSecret } from './team-secret.entity';
import { TeamSecretsService } from './team-secrets.service';
import { Idempotent } from '../idempotency';
import { RequirePermission } from '../../common/auth/require-permission.decorator';

@ApiTags('secrets')
@ApiBearerAuth()
@Controller('secrets')
export class SecretsController {
  constructor(private readonly secrets: TeamSecretsService) {}

  @Post()
  @RequirePermission('secrets.write')
  @ApiOperation({ operationId: 'createSecret', summary: 'Create a team secret' })
  @ApiProblems(400, 401, 409, 503)
  @ApiCreatedResponse({ type: SecretDto })
  @Idempotent()
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateSecretDto) {
    return toDto(await this.secrets.create(principal, { ...body, scope: scopeOf(body.scope) }));
  }

  @Get()
  @RequirePermission('secrets.read')
  @ApiOperation({ operationId: 'listSecrets', summary: "List the team's secrets (names only)" })
  @ApiProblems(401)
  @ApiOkResponse({ type: ListSecretsResponseDto })
  async list(@CurrentPrincipal() principal: Principal): Promise<ListSecretsResponseDto> {
    return { secrets: (await this.secrets.list(principal.teamId)).map(toDto) };
  }

  @Put(':name')
  @RequirePermission('secrets.write')
  @ApiOperation({ operationId: 'updateSecret', summary: "Set a secret's new value or scope" })
  @ApiProblems(400, 401, 403, 404, 503)
  @ApiOkResponse({ type: SecretDto })
  async update(
    @CurrentPrincipal() principal: Principal,
    @Param('name') name: string,
    @Body() body: UpdateSecretDto,
  ) {
    return toDto(
      await this.secrets.update(principal, name, { ...body, scope: scopeOf(body.scope) }),
    );
  }

  @Delete(':name')
  @HttpCode(204)
  @RequirePermission('secrets.write')
  @ApiOperation({ operationId: 'deleteSecret', summary: 'Delete a team secret' })
  @ApiProblems(401, 403, 404, 409)
  @ApiNoContentResponse()
  async remove(@CurrentPrincipal() principal: Principal, @Param('name') name: string) {
    await this.secrets.remove(principal, name);
  }
}

/** A request's scope with every list present; undefined and null pass through. */
function scopeOf(scope: SecretScopeDto | null | undefined): SecretScope | null | undefined {
  if (!scope) return scope;
  return {
    environments: scope.environments ?? [],
    agent_identities: scope.agent_identities ?? [],
    schedules: scope.schedules ?? [],
  };
}

function toDto(secret: TeamSecret): SecretDto {
  return {
    name: secret.name,
    description: secret.description,
    scope: secret.scope,
    purpose: secret.purpose ?? 'run',
    created_at: toRfc3339(secret.createdAt)!,
    updated_at: toRfc3339(secret.updatedAt)!,
  };
}
