import { MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { json } from 'express';
import { ApiKeysController } from './http/api-keys.controller';
import { ScimTokensController } from './scim/scim-tokens.controller';
import { ScimUsersController } from './scim/scim-users.controller';
import { TeamsModule } from './teams.module';

/** `/api-keys`, `/scim-tokens` and the SCIM service (`/scim/v2/Users`) on the API role. */
@Module({
  imports: [TeamsModule],
  controllers: [ApiKeysController, ScimTokensController, ScimUsersController],
})
export class TeamsApiModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    // SCIM clients send `application/scim+json`, which the API's JSON parser leaves alone.
    consumer
      .apply(json({ type: 'application/scim+json', limit: '1mb' }))
      .forRoutes(ScimUsersController);
  }
}
