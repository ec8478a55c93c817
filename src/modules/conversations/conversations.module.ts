import { Module } from '@nestjs/common';
import { ConversationsController } from './conversations.controller';
import { ConversationsService } from './conversations.service';
import { TranscriptsModule } from './transcripts.module';

/** The API over stored conversations: normalized steps and the raw transcripts. */
@Module({
  imports: [TranscriptsModule],
  controllers: [ConversationsController],
  providers: [ConversationsService],
})
export class ConversationsModule {}
