import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { ValidateNestedEach, ValidateNestedObject } from '../../../../common/errors/validation';

@ApiSchema({ name: 'FactoryRepositorySource' })
export class RepositorySourceDto {
  @ApiProperty({
    description: 'git URL of the repository (https, ssh; file when the operator allows it)',
  })
  @IsString()
  @MaxLength(1024)
  url: string;

  @ApiPropertyOptional({ description: 'Production branch (default main)', default: 'main' })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  branch?: string;

  @ApiPropertyOptional({
    description: 'Directory of the definition in the repository (default: root)',
  })
  @IsOptional()
  @IsString()
  @MaxLength(512)
  path?: string;

  @ApiPropertyOptional({
    description:
      'Ambient: name of a team secret holding a token (e.g. a GitHub fine-grained token with read access to contents) for a private https repository',
  })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  credentials_secret?: string;
}

@ApiSchema({
  name: 'UpdateFactoryRequest',
  description: 'Ambient: changes a factory; only the fields given change',
})
export class UpdateFactoryDto {
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description:
      'Repository-backed factories: the team secret with the token for the repository; null removes it',
  })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  repository_credentials_secret?: string | null;
}

@ApiSchema({ name: 'CreateFactoryRequest' })
export class CreateFactoryDto {
  @ApiPropertyOptional({
    description: 'Required for a managed factory; a repository sets it in factory.yaml',
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  name?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(4000)
  description?: string;

  @ApiPropertyOptional({
    type: RepositorySourceDto,
    description: 'Makes the factory repository-backed',
  })
  @IsOptional()
  @ValidateNestedObject()
  @Type(() => RepositorySourceDto)
  repository?: RepositorySourceDto;
}

@ApiSchema({ name: 'FactoryFileInput' })
export class FactoryFileDto {
  @ApiProperty({ example: 'webhooks/ci.yaml' })
  @IsString()
  @MinLength(1)
  @MaxLength(512)
  path: string;
  @ApiProperty() @IsString() content: string;
}

@ApiSchema({ name: 'FactoryDefinition' })
export class FactoryDefinitionDto {
  @ApiProperty({ type: [FactoryFileDto] })
  @IsArray()
  @ArrayMaxSize(500)
  @ValidateNestedEach()
  @Type(() => FactoryFileDto)
  files: FactoryFileDto[];
}

@ApiSchema({ name: 'FactoryDiagnostic' })
export class DiagnosticDto {
  @ApiProperty() code: string;
  @ApiProperty() path: string;
  @ApiProperty() line: number;
  @ApiProperty() column: number;
  @ApiProperty() message: string;
}

@ApiSchema({
  name: 'FactoryDefinitionSource',
  description: 'Ambient: where the definition comes from',
})
export class DefinitionSourceDto {
  @ApiProperty({ enum: ['managed', 'repository'] }) kind: string;
  @ApiProperty({ nullable: true, type: String }) repository_url: string | null;
  @ApiProperty({ nullable: true, type: String }) branch: string | null;
  @ApiProperty({ nullable: true, type: String }) path: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'Name of the team secret that authenticates fetches (never its value)',
  })
  credentials_secret: string | null;
  @ApiProperty({ nullable: true, type: String }) applied_commit: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) applied_at: string | null;
  @ApiPropertyOptional({
    description: 'Outcome of the last repository sync',
    type: 'object',
    additionalProperties: true,
    nullable: true,
  })
  last_sync: Record<string, unknown> | null;
}

@ApiSchema({ name: 'Factory' })
export class FactoryDto {
  @ApiProperty() uid: string;
  @ApiProperty() name: string;
  @ApiProperty({ nullable: true, type: String }) alias: string | null;
  @ApiProperty({ nullable: true, type: String }) avatar_url: string | null;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty() team_uid: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiProperty({ enum: ['GITHUB', 'GITLAB', 'AZURE_DEVOPS', 'NONE'] }) code_forge: string;
  @ApiProperty({ type: [String] }) code_forges: string[];
  @ApiProperty({ enum: ['CREATOR', 'EXECUTOR'] }) credential_strategy: string;
  @ApiProperty({ nullable: true, type: String }) default_environment: string | null;
  @ApiProperty({ nullable: true, type: String }) default_model: string | null;
  @ApiProperty({
    nullable: true,
    type: 'array',
    items: { type: 'object', additionalProperties: true },
  })
  integrations: Record<string, unknown>[] | null;
  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true } })
  repositories: { owner: string; repo: string }[];
  @ApiProperty({ type: 'object', additionalProperties: true }) agent_defaults: Record<
    string,
    unknown
  >;
  @ApiProperty({ type: 'object', additionalProperties: true }) scorer_defaults: Record<
    string,
    unknown
  >;
  @ApiProperty({ type: 'object', additionalProperties: true }) scoring: {
    default_model: string | null;
  };
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) creator?: { uid: string };
  @ApiProperty({ type: DefinitionSourceDto }) definition_source: DefinitionSourceDto;
}

@ApiSchema({
  name: 'AppliedFactory',
  description: 'Ambient: the factory as a create or definition apply left it, with warnings',
})
export class AppliedFactoryDto extends FactoryDto {
  @ApiProperty({
    type: [DiagnosticDto],
    description:
      'Problems that did not refuse the definition, e.g. `model_not_enabled`: an automation, agent or factory default names a model that is in the catalogue but not enabled, so the runs it would start are refused until it is',
  })
  warnings: DiagnosticDto[];
}

@ApiSchema({ name: 'ListFactoriesResponse' })
export class ListFactoriesResponseDto {
  @ApiProperty({ type: [FactoryDto] }) factories: FactoryDto[];
  @ApiProperty({ type: 'object', additionalProperties: true }) page_info: {
    has_next_page: boolean;
    next_cursor: string;
  };
}

@ApiSchema({ name: 'FactoryDefinitionResponse' })
export class DefinitionResponseDto {
  @ApiProperty({ type: [FactoryFileDto] }) files: FactoryFileDto[];
  @ApiProperty({ nullable: true, type: String }) applied_commit: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) applied_at: string | null;
}

@ApiSchema({ name: 'ValidateFactoryFilesResponse' })
export class ValidateFilesResponseDto {
  @ApiProperty() valid: boolean;
  @ApiProperty() schema_version: string;
  @ApiProperty({ type: [DiagnosticDto] }) diagnostics: DiagnosticDto[];
  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true } })
  deferred_resolutions: {
    field: string;
    kind: string;
    path: string;
  }[];
  @ApiProperty({ type: [String] }) state_dependent_checks_not_run: string[];
  @ApiProperty({ type: 'object', additionalProperties: true }) validation_scope: Record<
    string,
    string
  >;
}
