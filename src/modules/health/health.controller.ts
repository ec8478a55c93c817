import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { Public } from '../../common/auth/public.decorator';
import { ApiError } from '../../common/errors/api-error';
import { REDIS } from '../../common/redis/redis.module';
import { SandboxService } from '../sandbox/sandbox.service';
import { HealthResponseDto } from './health.dto';

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly sandboxes: SandboxService,
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
      this.dataSource.query('SELECT 1').then(
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
}
