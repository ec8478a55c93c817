import { Controller, Get, Inject, Param, Req, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiPropertyOptional,
  ApiSchema,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../../common/auth/public.decorator';
import { ApiProblems } from '../../common/errors/problem.schema';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { runPageUrl } from '../runs';
import { AuthStrategyRegistry } from '../teams';
import { optionalCallerTeam } from '../teams';
import { ConversationsService } from './conversations.service';

@ApiSchema({ name: 'SessionRedirectResponse' })
export class SessionRedirectResponseDto {
  @ApiPropertyOptional({
    description: 'The conversation ID to redirect to (only present when redirect is needed)',
  })
  conversation_id?: string;
}

@ApiSchema({ name: 'ConversationRedirectResponse' })
export class ConversationRedirectResponseDto {
  @ApiPropertyOptional({
    description: 'The live session to redirect to (only present when redirect is needed)',
  })
  session_id?: string;
}

const NEGOTIATION =
  'Content negotiation: a client accepting JSON (the SDKs; no Accept or */* too) gets 200 JSON, ' +
  'an empty object meaning "no redirect"; a browser (Accept preferring text/html) gets 302 to ' +
  'the page showing the run (its page in the web console, /console/runs/{runId}). Public, as ' +
  "in the SDKs: without a key the id is the credential; with a key only its team's ids exist.";

/** Where shared session and conversation pages should go (Oz `checkRedirect`). */
@ApiTags('agent')
@ApiBearerAuth()
@Public()
@Controller('agent')
export class RedirectsController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly conversations: ConversationsService,
    private readonly strategies: AuthStrategyRegistry,
  ) {}

  @Get('sessions/:sessionUuid/redirect')
  @ApiOperation({
    operationId: 'getSessionRedirect',
    summary: 'Get session redirect',
    description:
      'Whether a session (in Ambient: a run, whose id is the session uuid) should redirect to ' +
      'its conversation: conversation_id once the run has ended and its conversation has ' +
      `something recorded. ${NEGOTIATION}`,
  })
  @ApiParam({ name: 'sessionUuid', description: 'The UUID of the session (RunItem.session_id)' })
  @ApiOkResponse({ type: SessionRedirectResponseDto })
  @ApiFoundResponse({ description: 'Location: the page of the run (browsers only)' })
  @ApiProblems(401, 404)
  async session(
    @Param('sessionUuid') sessionUuid: string,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const team = await this.callerTeam(req);
    const { runId, body } = await this.conversations.sessionRedirect(team, sessionUuid);
    this.answer(req, res, runId, body);
  }

  @Get('conversations/:conversationId/redirect')
  @ApiOperation({
    operationId: 'getConversationRedirect',
    summary: 'Get conversation redirect',
    description:
      'Whether a conversation should redirect to a live session: session_id while the ' +
      `conversation's latest run is executing. ${NEGOTIATION}`,
  })
  @ApiParam({ name: 'conversationId' })
  @ApiOkResponse({ type: ConversationRedirectResponseDto })
  @ApiFoundResponse({
    description: "Location: the page of the conversation's latest run (browsers only)",
  })
  @ApiProblems(401, 404)
  async conversation(
    @Param('conversationId') conversationId: string,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const team = await this.callerTeam(req);
    const { runId, body } = await this.conversations.conversationRedirect(team, conversationId);
    this.answer(req, res, runId, body);
  }

  /** JSON for clients that take it (also on ties, without Accept, any type); 302 for browsers. */
  private answer(req: Request, res: Response, runId: string, body: object): void {
    res.vary('Accept');
    if (req.accepts(['application/json', 'text/html']) === 'text/html') {
      res.redirect(302, runPageUrl(this.config.server.publicUrl, runId));
      return;
    }
    res.status(200).json(body);
  }

  private callerTeam(req: Request): Promise<string | null> {
    return optionalCallerTeam(this.strategies, req, '(the id is the credential)');
  }
}
