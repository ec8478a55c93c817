import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal } from '../../common/auth/principal.decorator';
import { ApiProblems } from '../../common/errors/problem.schema';
import type { Principal } from '../../common/auth/principal';
import { CreateScheduleDto, UpdateScheduleDto } from './dto/schedule-request.dto';
import {
  DeleteScheduleResponseDto,
  ListSchedulesResponseDto,
  ScheduledAgentItemDto,
} from './dto/scheduled-agent-item.dto';
import { SchedulesService } from './schedules.service';
import { Idempotent } from '../idempotency';
import { RequirePermission } from '../../common/auth/require-permission.decorator';

@ApiTags('schedules')
@ApiBearerAuth()
@Controller('agent/schedules')
export class SchedulesController {
  constructor(private readonly schedules: SchedulesService) {}

  @Post()
  @HttpCode(201)
  @RequirePermission('schedules.write')
  @ApiOperation({
    operationId: 'createScheduledAgent',
    summary: 'Create a scheduled agent that runs on a cron schedule (UTC)',
  })
  @ApiProblems(400, 401, 403)
  @ApiCreatedResponse({ type: ScheduledAgentItemDto })
  @Idempotent()
  create(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateScheduleDto,
  ): Promise<ScheduledAgentItemDto> {
    return this.schedules.create(principal, body);
  }

  @Get()
  @RequirePermission('schedules.read')
  @ApiOperation({ operationId: 'listScheduledAgents', summary: 'List scheduled agents by name' })
  @ApiProblems(401)
  @ApiOkResponse({ type: ListSchedulesResponseDto })
  async list(@CurrentPrincipal() principal: Principal): Promise<ListSchedulesResponseDto> {
    return { schedules: await this.schedules.list(principal.teamId) };
  }

  @Get(':scheduleId')
  @RequirePermission('schedules.read')
  @ApiOperation({ operationId: 'getScheduledAgent', summary: 'Get a scheduled agent' })
  @ApiProblems(401, 404)
  @ApiParam({ name: 'scheduleId' })
  @ApiOkResponse({ type: ScheduledAgentItemDto })
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('scheduleId') id: string,
  ): Promise<ScheduledAgentItemDto> {
    return this.schedules.get(principal.teamId, id);
  }

  @Put(':scheduleId')
  @RequirePermission('schedules.write')
  @ApiOperation({
    operationId: 'updateScheduledAgent',
    summary: 'Replace a scheduled agent (all fields except agent_config are required)',
  })
  @ApiProblems(400, 401, 403, 404)
  @ApiParam({ name: 'scheduleId' })
  @ApiOkResponse({ type: ScheduledAgentItemDto })
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('scheduleId') id: string,
    @Body() body: UpdateScheduleDto,
  ): Promise<ScheduledAgentItemDto> {
    return this.schedules.update(principal, id, body);
  }

  @Delete(':scheduleId')
  @RequirePermission('schedules.write')
  @ApiOperation({
    operationId: 'deleteScheduledAgent',
    summary: 'Delete a scheduled agent; no run starts for it afterwards',
  })
  @ApiProblems(401, 404)
  @ApiParam({ name: 'scheduleId' })
  @ApiOkResponse({ type: DeleteScheduleResponseDto })
  async delete(
    @CurrentPrincipal() principal: Principal,
    @Param('scheduleId') id: string,
  ): Promise<DeleteScheduleResponseDto> {
    await this.schedules.delete(principal, id);
    return { success: true };
  }

  @Post(':scheduleId/pause')
  @HttpCode(200)
  @RequirePermission('schedules.write')
  @ApiOperation({
    operationId: 'pauseScheduledAgent',
    summary: 'Pause: no run starts until resumed',
  })
  @ApiProblems(401, 404)
  @ApiParam({ name: 'scheduleId' })
  @ApiOkResponse({ type: ScheduledAgentItemDto })
  @Idempotent()
  pause(
    @CurrentPrincipal() principal: Principal,
    @Param('scheduleId') id: string,
  ): Promise<ScheduledAgentItemDto> {
    return this.schedules.pause(principal, id);
  }

  @Post(':scheduleId/resume')
  @HttpCode(200)
  @RequirePermission('schedules.write')
  @ApiOperation({
    operationId: 'resumeScheduledAgent',
    summary: 'Resume: the next run is at the next tick from now (missed ticks do not fire)',
  })
  @ApiProblems(401, 404)
  @ApiParam({ name: 'scheduleId' })
  @ApiOkResponse({ type: ScheduledAgentItemDto })
  @Idempotent()
  resume(
    @CurrentPrincipal() principal: Principal,
    @Param('scheduleId') id: string,
  ): Promise<ScheduledAgentItemDto> {
    return this.schedules.resume(principal, id);
  }
}
