/** What other modules may use of secrets/: they import it from here only (ESLint rule ambient/import-through-index). */
export { SECRET_NAME_PATTERN } from './dto/secret.dto';
export { maskMcpServers, withMaskedMcpServers } from './mcp-secret-values';
export { McpSecretError, McpSecrets } from './mcp-secrets.service';
export { assertMcpServers } from './mcp-servers.rules';
export { harnessAuthSecretValues, runSecretRefs, secretRunContextOf } from './run-secrets';
export type { SecretRunContext } from './secret-scope';
export { SecretCipher } from './secret-cipher';
export { SecretsModule } from './secrets.module';
export { TeamSecretsService } from './team-secrets.service';
export type { SecretRef } from './team-secrets.service';
