import {
  ApiExtraModels,
  ApiProperty,
  ApiPropertyOptional,
  ApiSchema,
  getSchemaPath,
} from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsDefined,
  IsIn,
  IsEmail,
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import {
  ApprovalRuleDto,
  approvalsProperty,
  IsApprovalRules,
  IsEgressRules,
  SecretRefDto,
} from '../../run-config';
import type { ApprovalRule } from '../../run-config';
import type { EgressRuleInput } from '../../../common/egress/egress-policy';
import { MAX_EGRESS_RULES } from '../../../common/egress/egress-rules';
import { ScopeDto, UserProfileDto } from '../../teams';
import { NETWORK_POLICIES, REPO_PART_PATTERN } from '../environment-config';
import type { NetworkPolicy } from '../environment-config';
import { AMBIENT_EXTENSION } from '../../../common/openapi-extension';
import { ValidateNestedEach, ValidateNestedObject } from '../../../common/errors/validation';
import { IsPathComponent } from '../../../common/tenant-files/path-component';

@ApiSchema({ name: 'GitHubRepo' })
export class GitHubRepoDto {
  @ApiProperty({ description: 'Repository owner (user or organization)' })
  @IsString()
  @Matches(REPO_PART_PATTERN, { message: 'must be 1-100 letters, digits, _ . or -' })
  @IsPathComponent()
  owner: string;

  @ApiProperty({ description: 'Repository name' })
  @IsString()
  @Matches(REPO_PART_PATTERN, { message: 'must be 1-100 letters, digits, _ . or -' })
  @IsPathComponent()
  repo: string;
}

@ApiSchema({ name: 'AwsProviderConfig' })
export class AwsProviderDto {
  @ApiProperty({ description: 'AWS IAM role ARN to assume (stored; Ambient does not assume it)' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(2048)
  role_arn: string;
}

@ApiSchema({ name: 'GcpProviderConfig' })
export class GcpProviderDto {
  @ApiProperty({ description: 'GCP project number' })
  @IsString()
  @Matches(/^[0-9]{1,32}$/, { message: 'must be the numeric project number' })
  project_number: string;

  @ApiProperty({ description: 'Workload Identity Federation pool ID' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(128)
  workload_identity_federation_pool_id: string;

  @ApiProperty({ description: 'Workload Identity Federation provider ID' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(128)
  workload_identity_federation_provider_id: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsEmail()
  service_account_email?: string;
}

@ApiSchema({ name: 'ProvidersConfig' })
export class ProvidersDto {
  @ApiPropertyOptional({ type: AwsProviderDto })
  @IsOptional()
  @ValidateNestedObject()
  @Type(() => AwsProviderDto)
  aws?: AwsProviderDto;

  @ApiPropertyOptional({ type: GcpProviderDto })
  @IsOptional()
  @ValidateNestedObject()
  @Type(() => GcpProviderDto)
  gcp?: GcpProviderDto;
}

/** The object form of an `egress_allow` rule (documentation only: the rule parser checks it). */
@ApiSchema({ name: 'EgressRule' })
export class EgressRuleObjectDto {
  @ApiProperty({ description: '`host`, `host:port` or `*.suffix`', example: 'api.example.com' })
  host: string;

  @ApiPropertyOptional({
    type: [String],
    example: ['GET', 'HEAD'],
    description: 'The HTTP methods allowed; omitted = every method',
  })
  methods?: string[];
}

/** The writable fields of an environment other than its name. */
@ApiSchema({
  name: 'SandboxResources',
  description: "Ambient extension: limits of a run's sandbox, within the server's maxima",
})
export class SandboxResourcesDto {
  @ApiPropertyOptional({ minimum: 16, description: 'Memory of all its processes together, MiB' })
  @IsOptional()
  @IsInt()
  @Min(16)
  memory_mb?: number;

  @ApiPropertyOptional({ minimum: 8, description: 'Processes and threads' })
  @IsOptional()
  @IsInt()
  @Min(8)
  pids?: number;

  @ApiPropertyOptional({ minimum: 0.1, description: 'CPUs (fractions allowed)' })
  @IsOptional()
  @IsNumber()
  @Min(0.1)
  cpus?: number;
}

@ApiExtraModels(EgressRuleObjectDto)
class EnvironmentFieldsDto {
  @ApiPropertyOptional({ nullable: true, type: String, maxLength: 2000 })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  description?: string | null;

  @ApiPropertyOptional({
    description:
      "Image of the run's container (docker sandbox backend); unset = the server's default image",
  })
  @IsOptional()
  @IsString()
  @MaxLength(512)
  docker_image?: string;

  @ApiPropertyOptional({ type: [GitHubRepoDto] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @ValidateNestedEach()
  @Type(() => GitHubRepoDto)
  github_repos?: GitHubRepoDto[];

  @ApiPropertyOptional({ type: [String], description: 'Run in order in the workspace root' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @MinLength(1, { each: true })
  @MaxLength(10000, { each: true })
  setup_commands?: string[];

  @ApiPropertyOptional({ nullable: true, type: Number, minimum: 1, maximum: 60 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(60)
  failure_session_retention_minutes?: number | null;

  @ApiPropertyOptional({
    type: [SecretRefDto],
    nullable: true,
    description: 'Team secrets given to runs as environment variables of the same name',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(50)
  @ValidateNestedEach()
  @Type(() => SecretRefDto)
  secrets?: SecretRefDto[] | null;

  @ApiPropertyOptional({
    type: ProvidersDto,
    nullable: true,
    description: 'Stored and returned; Ambient performs no cloud identity federation',
  })
  @IsOptional()
  @ValidateNestedObject()
  @Type(() => ProvidersDto)
  providers?: ProvidersDto | null;

  @ApiPropertyOptional({
    ...AMBIENT_EXTENSION,
    enum: NETWORK_POLICIES,
    nullable: true,
    description:
      'Ambient extension: `none` (no network at all), `egress` (any outside host; the ' +
      "host's own services, private ranges and the cloud metadata address stay unreachable) or " +
      "`allowlist` (only the hosts `egress_allow` lists); null = the server's default. A team " +
      'admin may forbid `egress` (PUT /network-policy)',
  })
  @IsOptional()
  @IsIn(NETWORK_POLICIES)
  network?: NetworkPolicy | null;

  @ApiPropertyOptional({
    ...AMBIENT_EXTENSION,
    type: 'array',
    items: { oneOf: [{ type: 'string' }, { $ref: getSchemaPath(EgressRuleObjectDto) }] },
    maxItems: MAX_EGRESS_RULES,
    nullable: true,
    example: ['api.github.com', 'registry.npmjs.org:443', '*.pythonhosted.org'],
    description:
      'Ambient extension: the hosts a sandbox may reach in `allowlist` mode (no effect in the ' +
      'other modes): `"host"`, `"host:port"` or `"*.suffix"` (ports 443 and 80 when none is ' +
      'given), or `{"host": "...", "methods": ["GET", "HEAD"]}`. Stored as written; null clears',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_EGRESS_RULES)
  @IsEgressRules()
  egress_allow?: EgressRuleInput[] | null;

  @ApiPropertyOptional({
    ...AMBIENT_EXTENSION,
    type: SandboxResourcesDto,
    nullable: true,
    description: "Ambient extension: the sandbox's limits; null = the server's defaults",
  })
  @IsOptional()
  @ValidateNestedObject()
  @Type(() => SandboxResourcesDto)
  resources?: SandboxResourcesDto | null;

  @ApiPropertyOptional(
    approvalsProperty(
      'approval rules of every run in this environment; null or [] clears them.',
      true,
    ),
  )
  @IsOptional()
  @IsApprovalRules()
  approvals?: ApprovalRule[] | null;
}

@ApiSchema({ name: 'CreateEnvironmentRequest' })
export class CreateEnvironmentDto extends EnvironmentFieldsDto {
  @ApiProperty({ maxLength: 255 })
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  name: string;
}

@ApiSchema({ name: 'UpdateEnvironmentRequest' })
export class UpdateEnvironmentDto extends EnvironmentFieldsDto {
  @ApiPropertyOptional({ maxLength: 255 })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  name?: string;
}

export class ListEnvironmentsQueryDto {
  @ApiPropertyOptional({ enum: ['name', 'last_updated'], default: 'last_updated' })
  @IsOptional()
  @IsIn(['name', 'last_updated'])
  sort_by?: 'name' | 'last_updated';
}

@ApiSchema({ name: 'GrantEnvironmentRequest' })
export class GrantEnvironmentDto {
  @ApiProperty({ description: 'The team that gets guest access' })
  @IsString()
  @Matches(/^[A-Za-z0-9]{22}$/, { message: 'must be a 22-character team uid' })
  team_id: string;
}

@ApiSchema({ name: 'EnvironmentConfig' })
export class EnvironmentConfigDto {
  @ApiProperty() name: string;
  @ApiPropertyOptional({ nullable: true, type: String }) description?: string | null;
  @ApiPropertyOptional() docker_image?: string;
  @ApiProperty({ type: [GitHubRepoDto] }) github_repos: GitHubRepoDto[];
  @ApiProperty({ type: [String] }) setup_commands: string[];
  @ApiPropertyOptional({ nullable: true, type: Number })
  failure_session_retention_minutes?: number | null;
  @ApiProperty({ type: [SecretRefDto] }) secrets: SecretRefDto[];
  @ApiPropertyOptional({ type: ProvidersDto }) providers?: ProvidersDto;
  @ApiPropertyOptional({ ...AMBIENT_EXTENSION, enum: NETWORK_POLICIES })
  network?: NetworkPolicy;
  @ApiPropertyOptional({
    ...AMBIENT_EXTENSION,
    type: 'array',
    items: { oneOf: [{ type: 'string' }, { $ref: getSchemaPath(EgressRuleObjectDto) }] },
  })
  egress_allow?: EgressRuleInput[];
  @ApiPropertyOptional({ ...AMBIENT_EXTENSION, type: SandboxResourcesDto })
  resources?: SandboxResourcesDto;
  @ApiPropertyOptional({
    ...AMBIENT_EXTENSION,
    type: [ApprovalRuleDto],
    description: 'Ambient extension: the approval rules of its runs (absent: none)',
  })
  approvals?: ApprovalRule[];
}

@ApiSchema({ name: 'EnvironmentLastTask' })
export class LastTaskDto {
  @ApiProperty() id: string;
  @ApiProperty() title: string;
  @ApiProperty() state: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiPropertyOptional({ format: 'date-time', nullable: true, type: String })
  started_at?: string | null;
}

@ApiSchema({ name: 'Environment' })
export class EnvironmentDto {
  @ApiProperty({ description: '22 characters [A-Za-z0-9]' }) uid: string;
  @ApiProperty({ type: EnvironmentConfigDto }) config: EnvironmentConfigDto;
  @ApiProperty({ format: 'date-time' }) last_updated: string;
  @ApiProperty({
    description:
      "For a guest, its own runs' setup outcome (the owner's runs and other guests' do not change it)",
  })
  setup_failed: boolean;
  @ApiPropertyOptional({
    ...AMBIENT_EXTENSION,
    description:
      "Ambient extension: the configuration's version (counts the owner's changes). A guest sees " +
      'and runs in the version its admin accepted',
  })
  version?: number;
  @ApiPropertyOptional({ type: LastTaskDto }) last_task_created?: LastTaskDto;
  @ApiPropertyOptional({ format: 'date-time', nullable: true, type: String })
  last_task_run_timestamp?: string | null;
  @ApiPropertyOptional({ type: ScopeDto, description: 'The owning team' }) scope?: ScopeDto;
  @ApiPropertyOptional({
    ...AMBIENT_EXTENSION,
    enum: ['owner', 'guest'],
    description:
      "Ambient extension: the caller's relation to the environment (owning team, or guest by " +
      'grant or share link)',
  })
  access?: 'owner' | 'guest';
  @ApiPropertyOptional({ type: UserProfileDto, description: 'e-mail omitted for guests' })
  creator?: UserProfileDto;
  @ApiPropertyOptional({ type: UserProfileDto, description: 'e-mail omitted for guests' })
  last_editor?: UserProfileDto;
}

@ApiSchema({ name: 'ListEnvironmentsResponse' })
export class ListEnvironmentsResponseDto {
  @ApiProperty({ type: [EnvironmentDto] }) environments: EnvironmentDto[];
}

@ApiSchema({ name: 'EnvironmentShareLink' })
export class ShareLinkDto {
  @ApiProperty({ description: 'Give this token to another team; they accept it to get access' })
  share_token: string;
}

@ApiSchema({ name: 'AllowEgressRequest' })
@ApiExtraModels(EgressRuleObjectDto)
export class AllowEgressDto {
  @ApiProperty({
    ...AMBIENT_EXTENSION,
    oneOf: [{ type: 'string' }, { $ref: getSchemaPath(EgressRuleObjectDto) }],
    example: 'api.example.com',
    description:
      'One `egress_allow` rule to add (`"host"`, `"host:port"`, `"*.suffix"` or an object)',
  })
  @IsDefined()
  rule: EgressRuleInput;
}

@ApiSchema({ name: 'AllowEgressResponse' })
export class AllowEgressResponseDto {
  @ApiProperty({ description: 'false: the rule was listed already, nothing changed' })
  added: boolean;

  @ApiProperty({ type: EnvironmentDto }) environment: EnvironmentDto;
}

@ApiSchema({ name: 'AcceptEnvironmentRequest' })
export class AcceptEnvironmentDto {
  @ApiProperty({
    description:
      'The version reviewed (from the pending list); 409 when the owner has changed it since',
    minimum: 1,
  })
  @IsInt()
  @Min(1)
  version: number;
}

@ApiSchema({ name: 'PendingEnvironment' })
export class PendingEnvironmentDto {
  @ApiProperty({ description: '22 characters [A-Za-z0-9]' }) uid: string;
  @ApiProperty({ type: ScopeDto, description: 'The owning team' }) scope: ScopeDto;
  @ApiProperty({ description: 'The offered version; accept it by this number' }) version: number;
  @ApiProperty({ type: EnvironmentConfigDto, description: 'The offered configuration' })
  config: EnvironmentConfigDto;
  @ApiProperty({ nullable: true, type: Number, description: 'The version in use, if any' })
  accepted_version: number | null;
  @ApiProperty({ nullable: true, type: EnvironmentConfigDto, description: 'The version in use' })
  accepted_config: EnvironmentConfigDto | null;
  @ApiProperty({ format: 'date-time' }) offered_at: string;
}

@ApiSchema({ name: 'ListPendingEnvironmentsResponse' })
export class ListPendingEnvironmentsResponseDto {
  @ApiProperty({ type: [PendingEnvironmentDto] }) environments: PendingEnvironmentDto[];
}
