import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CurrentPrincipal } from '../../../common/auth/principal.decorator';
import type { Principal } from '../../../common/auth/principal';
import { RequirePermission } from '../../../common/auth/require-permission.decorator';
import { API_KEY_STRATEGY, SESSION_STRATEGY } from '../../teams';
import { parseLiveRuns } from './live-runs.params';
import { RunStreamHub } from './run-stream-hub.service';
import { RunStreamReader } from './run-stream-reader.service';

/**
 * GET /console/live-runs?runs=<run id>[@<event id>],…: the console's one shared stream of the
 * runs its open pages show (docs/console.md). Console-internal, so not in the OpenAPI document;
 * authenticated and scoped exactly as GET /agent/runs/{runId}/stream: `runs.read`, and only runs
 * of the caller's team (another team's run is `gone`, as if it did not exist).
 */
@ApiExcludeController()
@Controller('console')
export class LiveRunsController {
  constructor(
    private readonly hub: RunStreamHub,
    private readonly reader: RunStreamReader,
  ) {}

  @Get('live-runs')
  @RequirePermission('runs.read')
  async stream(
    @CurrentPrincipal() principal: Principal,
    @Query('runs') query: unknown,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const wanted = parseLiveRuns(query);
    const visible = await this.reader.visibleRuns(
      principal.teamId,
      wanted.map((entry) => entry.runId),
    );
    const runs = wanted.map((entry) => ({ ...entry, run: visible.get(entry.runId) ?? null }));
    const watched =
      principal.strategy === API_KEY_STRATEGY || principal.strategy === SESSION_STRATEGY;
    await this.hub.openLive(req, res, runs, watched ? principal.keyId : null);
  }
}
