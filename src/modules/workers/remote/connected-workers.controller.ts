import { Controller, Get } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiSchema,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal } from '../../../common/auth/principal.decorator';
import { ApiProblems } from '../../../common/errors/problem.schema';
import { RequirePermission } from '../../../common/auth/require-permission.decorator';
import type { Principal } from '../../../common/auth/principal';
import { WorkerPresence } from './worker-presence.service';

@ApiSchema({ name: 'ConnectedSelfHostedWorker' })
export class ConnectedWorkerDto {
  @ApiProperty({ description: 'The worker id the workers connected with' }) worker_host: string;
  @ApiProperty({ description: 'Open websocket connections with this id, on every API replica' })
  connection_count: number;
  @ApiProperty({ format: 'date-time', description: 'When the oldest connection opened' })
  connected_at: string;
  @ApiProperty({ format: 'date-time', description: 'The latest frame or ping from any of them' })
  last_seen_at: string;
}

@ApiSchema({ name: 'ListConnectedSelfHostedWorkersResponse' })
export class ConnectedWorkersResponseDto {
  @ApiProperty({ type: [ConnectedWorkerDto] }) workers: ConnectedWorkerDto[];
}

@ApiTags('agent')
@ApiBearerAuth()
@Controller('agent')
export class ConnectedWorkersController {
  constructor(private readonly presence: WorkerPresence) {}

  @Get('connected-self-hosted-workers')
  @RequirePermission('workers.read')
  @ApiOperation({
    operationId: 'listConnectedSelfHostedWorkers',
    summary: "The team's self-hosted workers connected now (may be briefly stale)",
  })
  @ApiProblems(401, 403)
  @ApiOkResponse({ type: ConnectedWorkersResponseDto })
  async list(@CurrentPrincipal() principal: Principal): Promise<ConnectedWorkersResponseDto> {
    return { workers: await this.presence.list(principal.teamId) };
  }
}
