import { Controller, Get, Inject, Res } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { InjectDataSource } from '@nestjs/typeorm';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { Public } from '../../common/auth/public.decorator';
import { ApiError } from '../../common/errors/api-error';
import { REDIS } from '../../common/redis/redis.module';
import { SandboxService } from '../workers';
import { HealthCheckResultDto, HealthIndicatorDto, HealthResponseDto } from './health.dto';
import { HealthAnswer, Readiness } from './readiness.service';
import { pingDatabase } from '../../database/database-ping';

@ApiTags('health')
@ApiExtraModels(HealthIndicatorDto)
@Controller('health')
export class HealthController {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly sandboxes: SandboxService,
    private readonly readiness: Readiness,
  ) {}

  @Get()
  @Public()
  @ApiOperation({
    operationId: 'health',
    summary: 'Readiness: MySQL and Redis answer; which sandbox backend runs agent programs',
  })
  @ApiOkResponse({ type: HealthResponseDto })
  async check(): Promise<HealthResponseDto> {
    const [database, redis] = await Promise.all([
      pingDatabase(this.dataSource).then(
        () => 'ok',
        () => 'unreachable',
      ),
      this.redis.ping().then(
        () => 'ok',
        () => 'unreachable',
      ),
    ]);
    if (database !== 'ok' || redis !== 'ok') {
      throw new ApiError('resource_unavailable', `database: ${database}, redis: ${redis}`, {
        headers: { 'Retry-After': '5' },
      });
    }
    return { status: 'ok', database, redis, sandbox: this.sandboxes.describe() };
  }

  @Get('live')
  @Public()
  @ApiOperation({
    operationId: 'healthLive',
    summary: 'Liveness: the process answers (no dependency is checked)',
  })
  @ApiOkResponse({ type: HealthCheckResultDto })
  async live(@Res({ passthrough: true }) res: Response): Promise<HealthCheckResultDto> {
    return send(res, await this.readiness.live());
  }

  @Get('ready')
  @Public()
  @ApiOperation({
    operationId: 'healthReady',
    summary:
      "Readiness: what this process's roles need answers (MySQL, Redis; a sandbox backend for the worker role)",
  })
  @ApiOkResponse({ type: HealthCheckResultDto })
  @ApiServiceUnavailableResponse({
    type: HealthCheckResultDto,
    description: 'A dependency is down: `error` names it',
  })
  async ready(@Res({ passthrough: true }) res: Response): Promise<HealthCheckResultDto> {
    return send(res, await this.readiness.ready());
  }
}

/** Terminus' result as the body, its status as the HTTP status (503 when something is down). */
export function send(res: Response, answer: HealthAnswer): HealthCheckResultDto {
  res.status(answer.statusCode);
  return answer.body as HealthCheckResultDto;
}
