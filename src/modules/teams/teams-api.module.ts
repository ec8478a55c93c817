import { Module } from '@nestjs/common';
import { ApiKeysController } from './http/api-keys.controller';
import { TeamsModule } from './teams.module';

/** `/api-keys` on the API role. */
@Module({ imports: [TeamsModule], controllers: [ApiKeysController] })
export class TeamsApiModule {}
