import { Module } from '@nestjs/common';
import { RunsModule } from '../runs';
import { TeamsModule } from '../teams';
import { ConversationsController } from './conversations.controller';
import { ConversationsService } from './conversations.service';
import { RedirectsController } from './redirects.controller';
import { TranscriptsModule } from './transcripts.module';

/** The API over stored conversations: normalized steps and the raw transcripts. */
@Module({
  imports: [TranscriptsModule, TeamsModule, RunsModule],
  controllers: [ConversationsController, RedirectsController],
  providers: [ConversationsService],
})
export class ConversationsModule {}
