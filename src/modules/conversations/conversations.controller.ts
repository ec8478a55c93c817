import { Controller, Get, Param, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentPrincipal } from '../../common/auth/principal.decorator';
import { ApiProblems } from '../../common/errors/problem.schema';
import type { Principal } from '../../common/auth/principal';
import { ConversationDto } from './conversation.dto';
import type { Conversation } from '../runs';
import { ConversationsService } from './conversations.service';
import { RequirePermission } from '../../common/auth/require-permission.decorator';

@ApiTags('agent')
@ApiBearerAuth()
@Controller('agent')
export class ConversationsController {
  constructor(private readonly conversations: ConversationsService) {}

  @Get('runs/:runId/conversation')
  @RequirePermission('runs.read')
  @ApiOperation({ operationId: 'getRunConversation', summary: "A run's normalized conversation" })
  @ApiParam({ name: 'runId' })
  @ApiOkResponse({ type: ConversationDto })
  @ApiProblems(401, 403, 404)
  runConversation(
    @CurrentPrincipal() principal: Principal,
    @Param('runId') runId: string,
  ): Promise<Conversation> {
    return this.conversations.forRun(principal.teamId, runId);
  }

  @Get('runs/:runId/transcript')
  @RequirePermission('runs.read')
  @ApiOperation({
    operationId: 'getRunTranscript',
    summary: "Redirect to the run's raw transcript",
  })
  @ApiParam({ name: 'runId' })
  @ApiFoundResponse({ description: 'Location: a signed, time-limited download URL (JSONL)' })
  @ApiProblems(401, 403, 404)
  async runTranscript(
    @CurrentPrincipal() principal: Principal,
    @Param('runId') runId: string,
    @Res() res: Response,
  ): Promise<void> {
    const { url } = await this.conversations.runTranscriptUrl(principal.teamId, runId);
    res.redirect(302, url);
  }

  @Get('conversations/:conversation_id')
  @RequirePermission('runs.read')
  @ApiOperation({ operationId: 'getConversation', summary: 'A normalized conversation' })
  @ApiParam({ name: 'conversation_id' })
  @ApiOkResponse({ type: ConversationDto })
  @ApiProblems(401, 403, 404)
  conversation(
    @CurrentPrincipal() principal: Principal,
    @Param('conversation_id') conversationId: string,
  ): Promise<Conversation> {
    return this.conversations.forConversation(principal.teamId, conversationId);
  }

  @Get('conversations/:conversation_id/transcript')
  @RequirePermission('runs.read')
  @ApiOperation({
    operationId: 'getConversationTranscript',
    summary: "Redirect to the conversation's raw transcript",
  })
  @ApiParam({ name: 'conversation_id' })
  @ApiFoundResponse({ description: 'Location: a signed, time-limited download URL (JSONL)' })
  @ApiProblems(401, 403, 404)
  async conversationTranscript(
    @CurrentPrincipal() principal: Principal,
    @Param('conversation_id') conversationId: string,
    @Res() res: Response,
  ): Promise<void> {
    const { url } = await this.conversations.conversationTranscriptUrl(
      principal.teamId,
      conversationId,
    );
    res.redirect(302, url);
  }
}
