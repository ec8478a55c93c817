import { Controller, Get, Headers, Param, Query, Req, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiProduces,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CurrentPrincipal } from '../../common/auth/principal.decorator';
import { ApiError } from '../../common/errors/api-error';
import { ApiProblems } from '../../common/errors/problem.schema';
import type { Principal } from '../../common/auth/principal';
import { RunStreamHub } from './live/run-stream-hub.service';
import { parseCursor, StreamCursor } from './live/stream-cursor';
import { RunsService } from './runs.service';
import { RequirePermission } from '../../common/auth/require-permission.decorator';
import { API_KEY_STRATEGY, SESSION_STRATEGY } from '../teams';

const DESCRIPTION = [
  'Server-Sent Events of one run, from the moment of connecting (Ambient extension).',
  '',
  '- `event: run`: the RunItem exactly as `GET /agent/runs/{runId}` returns it; first on every',
  '  connect (a snapshot), then whenever its state, status message, usage or artifacts change.',
  '  Changes close together may arrive as one snapshot; the timeline has every transition.',
  '- `event: timeline`: one element of `GET /agent/runs/{runId}/timeline`\u2019s `events`.',
  '- `event: message`: one conversation message, as in `GET /agent/runs/{runId}/conversation`.',
  '- `: keep-alive` comments every 15 s (AMBIENT_STREAM_HEARTBEAT_MS).',
  '',
  'Every event has an `id:` `<timeline id>-<message id>`; send the last one back as the',
  '`Last-Event-ID` header (or `?last_event_id=`) to receive exactly the timeline events and',
  'messages after it (`0-0`: the whole history), then the snapshot again, then live events.',
  'The stream stays open after a terminal state (a follow-up can reopen the run).',
].join('\n');

@ApiTags('agent')
@ApiBearerAuth()
@Controller('agent')
export class RunStreamController {
  constructor(
    private readonly runs: RunsService,
    private readonly hub: RunStreamHub,
  ) {}

  @Get('runs/:runId/stream')
  @RequirePermission('runs.read')
  @ApiOperation({
    operationId: 'streamRun',
    summary: "Live updates of a run: state changes, timeline events, the conversation's messages",
    description: DESCRIPTION,
  })
  @ApiProduces('text/event-stream')
  @ApiProblems(400, 401, 404)
  @ApiParam({ name: 'runId' })
  @ApiHeader({
    name: 'Last-Event-ID',
    required: false,
    description: 'Resume after this event id (`<timeline id>-<message id>`)',
  })
  @ApiQuery({
    name: 'last_event_id',
    required: false,
    type: String,
    description: 'The same as the Last-Event-ID header, for clients that cannot set headers',
  })
  @ApiOkResponse({
    description: 'A text/event-stream of `run`, `timeline` and `message` events',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  })
  async stream(
    @CurrentPrincipal() principal: Principal,
    @Param('runId') runId: string,
    @Headers('last-event-id') header: string | undefined,
    @Query('last_event_id') query: unknown,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const resume = resumeCursor(header, query);
    const run = await this.runs.findVisible(principal.teamId, runId);
    const watched =
      principal.strategy === API_KEY_STRATEGY || principal.strategy === SESSION_STRATEGY;
    const keyId = watched ? principal.keyId : null;
    await this.hub.open(req, res, run, resume, keyId);
  }
}

function resumeCursor(header: string | undefined, query: unknown): StreamCursor | null {
  const [field, value] =
    header !== undefined ? ['Last-Event-ID', header] : ['last_event_id', query];
  if (value === undefined || value === '') return null;
  const cursor = typeof value === 'string' ? parseCursor(value) : null;
  if (!cursor) {
    throw ApiError.invalid(
      field,
      'must be an event id of this stream (`<timeline id>-<message id>`)',
    );
  }
  return cursor;
}
