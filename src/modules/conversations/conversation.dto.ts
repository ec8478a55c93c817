import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ACTION_CATEGORIES } from '../runs';

/** OpenAPI description of the conversation shapes (the service returns plain objects). */
@ApiSchema({ name: 'ConversationContentBlock' })
export class ContentBlockDto {
  @ApiProperty({ enum: ['text', 'action', 'action_result', 'event'] }) type: string;
  @ApiPropertyOptional() message_id?: string;
  @ApiPropertyOptional({ description: 'text' }) text?: string;
  @ApiPropertyOptional({ description: 'action' }) id?: string;
  @ApiPropertyOptional({ enum: ACTION_CATEGORIES }) category?: string;
  @ApiPropertyOptional({ description: 'action, action_result, event' }) name?: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) input?: object;
  @ApiPropertyOptional({ description: 'action_result' }) action_id?: string;
  @ApiPropertyOptional({ enum: ['running', 'completed', 'failed', 'denied'] }) state?: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) output?: object;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) data?: object;
}

@ApiSchema({ name: 'ConversationMessage' })
export class ConversationMessageDto {
  @ApiProperty({ enum: ['user', 'assistant', 'tool', 'system'] }) role: string;
  @ApiProperty({ type: [ContentBlockDto] }) content: ContentBlockDto[];
  @ApiPropertyOptional({ type: [String] }) message_ids?: string[];
  @ApiPropertyOptional({
    description:
      'Request identifier shared by transcript messages from the same request, when available ' +
      "(Ambient: the model provider's response id, on the assistant turn and the tool results " +
      'answering its calls)',
  })
  request_id?: string;
  @ApiPropertyOptional({ format: 'date-time' }) timestamp?: string;
}

@ApiSchema({ name: 'ConversationStep' })
export class ConversationStepDto {
  @ApiProperty() id: string;
  @ApiPropertyOptional() description?: string;
  @ApiPropertyOptional() summary?: string;
  @ApiPropertyOptional({ format: 'date-time' }) started_at?: string;
  @ApiPropertyOptional({ format: 'date-time' }) completed_at?: string;
  @ApiProperty({ type: [ConversationMessageDto] }) messages: ConversationMessageDto[];
  @ApiProperty({
    type: () => ConversationStepDto,
    isArray: true,
    description: 'Nested delegated work performed as part of this step',
  })
  steps: ConversationStepDto[];
}

@ApiSchema({ name: 'ConversationResponse' })
export class ConversationDto {
  @ApiProperty() conversation_id: string;
  @ApiProperty({ type: [ConversationStepDto] }) steps: ConversationStepDto[];
}
