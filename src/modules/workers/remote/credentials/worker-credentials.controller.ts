import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CurrentPrincipal } from '../../../../common/auth/principal.decorator';
import { RequirePermission } from '../../../../common/auth/require-permission.decorator';
import type { Principal } from '../../../../common/auth/principal';
import { ApiError } from '../../../../common/errors/api-error';
import { ApiProblems } from '../../../../common/errors/problem.schema';
import { AuditLog } from '../../../audit';
import {
  CreatedWorkerCredentialDto,
  CreateWorkerCredentialDto,
  ListWorkerCredentialsResponseDto,
  toWorkerCredentialDto,
} from './worker-credential.dto';
import { workerScopeProblem } from './worker-credential-format';
import { WorkerCredentialsService } from './worker-credentials.service';

/**
 * The credentials self-hosted workers register with (admins only). A revoked credential is
 * refused at the next handshake, and its open connections close within the re-check interval.
 */
@ApiTags('worker-credentials')
@ApiBearerAuth()
@Controller('worker-credentials')
export class WorkerCredentialsController {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly credentials: WorkerCredentialsService,
    private readonly audit: AuditLog,
  ) {}

  @Post()
  @HttpCode(201)
  @RequirePermission('worker_credentials.write')
  @ApiOperation({
    operationId: 'createWorkerCredential',
    summary: 'Create a self-hosted worker credential for a worker id or pool (shown once)',
  })
  @ApiProblems(400, 401, 403)
  @ApiCreatedResponse({ type: CreatedWorkerCredentialDto })
  async create(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateWorkerCredentialDto,
  ): Promise<CreatedWorkerCredentialDto> {
    const problem = workerScopeProblem(body.worker_id);
    if (problem) throw ApiError.invalid('worker_id', problem);
    const { credential, record } = await this.dataSource.transaction(async (manager) => {
      const made = await this.credentials.create(
        principal,
        { name: body.name, workerId: body.worker_id },
        manager,
      );
      await this.audit.record(
        manager,
        principal,
        'worker_credential.create',
        target(made.record.id),
        {
          name: body.name,
          worker_id: body.worker_id,
        },
      );
      return made;
    });
    return { ...toWorkerCredentialDto(record), credential };
  }

  @Get()
  @RequirePermission('worker_credentials.read')
  @ApiOperation({
    operationId: 'listWorkerCredentials',
    summary: "The team's worker credentials, oldest first (never the secret)",
  })
  @ApiProblems(401, 403)
  @ApiOkResponse({ type: ListWorkerCredentialsResponseDto })
  async list(@CurrentPrincipal() principal: Principal): Promise<ListWorkerCredentialsResponseDto> {
    const records = await this.credentials.list(principal.teamId);
    return { worker_credentials: records.map(toWorkerCredentialDto) };
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('worker_credentials.write')
  @ApiOperation({ operationId: 'revokeWorkerCredential', summary: 'Revoke a worker credential' })
  @ApiProblems(401, 403, 404)
  @ApiParam({ name: 'id' })
  @ApiNoContentResponse({ description: 'Revoked (revoking twice is harmless)' })
  async revoke(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const record = await this.credentials.revoke(principal.teamId, id, manager);
      if (!record) throw ApiError.notFound(`worker credential "${id}"`);
      await this.audit.record(manager, principal, 'worker_credential.revoke', target(id), {
        name: record.name,
        worker_id: record.workerId,
      });
    });
  }
}

function target(id: string) {
  return { type: 'worker_credential', id };
}
