import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CurrentPrincipal } from '../../common/auth/principal.decorator';
import { Public } from '../../common/auth/public.decorator';
import { ApiProblems } from '../../common/errors/problem.schema';
import { AuthStrategyRegistry } from '../teams';
import { optionalCallerTeam } from '../teams';
import type { Principal } from '../../common/auth/principal';
import { ArtifactReader, ArtifactView } from './artifact-reader.service';
import { RequirePermission } from '../../common/auth/require-permission.decorator';

/**
 * Artifacts by uid. The key is optional: public artifacts are readable without one, private
 * ones only with a key of the owning team. A key that is sent must be valid.
 */
@ApiTags('agent')
@ApiBearerAuth()
@Public()
@Controller('agent/artifacts')
export class ArtifactsController {
  constructor(
    private readonly reader: ArtifactReader,
    private readonly strategies: AuthStrategyRegistry,
  ) {}

  @Get(':artifactUid')
  @ApiOperation({ operationId: 'getArtifact', summary: 'An artifact (plan content or download)' })
  @ApiParam({ name: 'artifactUid' })
  @ApiOkResponse({
    description: 'PLAN, SCREENSHOT or FILE artifact (discriminator artifact_type)',
    schema: { $ref: '#/components/schemas/ArtifactResponse' },
  })
  @ApiProblems(401, 404)
  async get(@Param('artifactUid') uid: string, @Req() req: Request): Promise<ArtifactView> {
    return this.reader.view(uid, await this.callerTeam(req));
  }

  @Get(':artifactUid/download')
  @ApiOperation({ operationId: 'downloadArtifact', summary: "Redirect to the artifact's file" })
  @ApiParam({ name: 'artifactUid' })
  @ApiFoundResponse({ description: 'Location: a signed, time-limited download URL' })
  @ApiProblems(401, 404)
  async download(
    @Param('artifactUid') uid: string,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const { url } = await this.reader.downloadUrl(uid, await this.callerTeam(req));
    res.redirect(302, url);
  }

  private callerTeam(req: Request): Promise<string | null> {
    // A run-scoped key reads as its team would not: it may only report.
    return optionalCallerTeam(this.strategies, req, 'for public artifacts');
  }
}

/** Screenshots addressed through their conversation (team key only). */
@ApiTags('agent')
@ApiBearerAuth()
@Controller('agent/conversations/:conversation_id/screenshots')
export class ConversationScreenshotsController {
  constructor(private readonly reader: ArtifactReader) {}

  @Get(':screenshot_uid/download')
  @RequirePermission('runs.read')
  @ApiOperation({
    operationId: 'downloadConversationScreenshot',
    summary: 'Redirect to a screenshot of the conversation',
  })
  @ApiParam({ name: 'conversation_id' })
  @ApiParam({ name: 'screenshot_uid' })
  @ApiFoundResponse({ description: 'Location: a signed, time-limited download URL' })
  @ApiProblems(401, 404)
  async download(
    @CurrentPrincipal() principal: Principal,
    @Param('conversation_id') conversationId: string,
    @Param('screenshot_uid') uid: string,
    @Res() res: Response,
  ): Promise<void> {
    const { url } = await this.reader.screenshotUrl(conversationId, uid, principal.teamId);
    res.redirect(302, url);
  }
}
