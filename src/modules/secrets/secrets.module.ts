import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { McpSecrets } from './mcp-secrets.service';
import { SecretCipher } from './secret-cipher';
import { SecretsController } from './secrets.controller';
import { TeamSecret } from './team-secret.entity';
import { TeamSecretRepository } from './team-secret.repository';
import { TeamSecretsService } from './team-secrets.service';

/** Team secrets for every role that needs them (the ingress decrypts webhook secrets). */
@Module({
  imports: [TypeOrmModule.forFeature([TeamSecret])],
  providers: [SecretCipher, TeamSecretRepository, TeamSecretsService, McpSecrets],
  exports: [SecretCipher, TeamSecretsService, McpSecrets],
})
export class SecretsModule {}

/** `/secrets` on the API role. */
@Module({ imports: [SecretsModule], controllers: [SecretsController] })
export class SecretsApiModule {}
