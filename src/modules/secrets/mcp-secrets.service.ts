import { Injectable } from '@nestjs/common';
import { ApiError } from '../../common/errors/api-error';
import type { McpSecretValue, McpServerConfig, StoredMcpServerConfig } from '../run-config';
import {
  isSealedValue,
  isSecretReference,
  mapMcpValues,
  MASKED_VALUE,
  maskedValue,
  MCP_SECRET_MAPS,
} from './mcp-secret-values';
import { describeMove, mcpDestination } from './mcp-destination';
import { SecretDecryptionError } from './secret-cipher';
import { TeamSecretsService } from './team-secrets.service';

/**
 * A stored literal kept from a masked value must go to the destination it was stored for; a team
 * secret reference (`<secret:NAME>`) is not bound, as anyone who may edit could name it anew.
 */
function assertSameDestination(
  server: StoredMcpServerConfig | undefined,
  previous: StoredMcpServerConfig | undefined,
  where: string,
): void {
  const before = mcpDestination(previous);
  const after = mcpDestination(server);
  if (before === after) return;
  throw ApiError.invalid(
    where,
    `is a masked value, and the server's destination changed (${describeMove(before, after)}): ` +
      'send the credential again, or {"secret": "NAME"}',
  );
}

/** An MCP value that cannot be revealed at execution time; the run fails with this message. */
export class McpSecretError extends Error {}

/**
 * MCP `env` and `headers` values are credentials. They are stored sealed (a literal encrypted
 * with the team-secret cipher, bound to the team) or as a reference to a team secret
 * (`{"secret": "NAME"}`), shown masked, and revealed only in memory for the execution.
 */
@Injectable()
export class McpSecrets {
  constructor(private readonly secrets: TeamSecretsService) {}

  /**
   * The form to store: literals encrypted, references checked to exist (400 naming the field
   * otherwise). A value equal to the mask of the value `previous` stores at the same place (a
   * response sent back unchanged) keeps that value, a literal only while the server's destination
   * is unchanged (mcpDestination): a credential goes only where its owner sent it. `field` names
   * the map in errors.
   */
  async seal(
    teamId: string,
    servers: Record<string, StoredMcpServerConfig>,
    field: string,
    previous?: Record<string, StoredMcpServerConfig> | null,
  ): Promise<Record<string, StoredMcpServerConfig>> {
    const checks: Promise<void>[] = [];
    const needsCipher = () => {
      if (!this.secrets.cipher.enabled) {
        throw ApiError.invalid(
          field,
          'env and headers values are stored encrypted, and this server has no AMBIENT_SECRETS_KEY',
        );
      }
    };
    const sealed = mapMcpValues(servers, (value, at): McpSecretValue => {
      const where = `${field}.${at.server}.${at.map}.${at.key}`;
      const before = previous?.[at.server]?.[at.map]?.[at.key];
      if (typeof value === 'string' && before !== undefined && value === maskedValue(before)) {
        if (!isSecretReference(before)) {
          assertSameDestination(servers[at.server], previous?.[at.server], where);
        }
        return before;
      }
      if (isSecretReference(value)) {
        checks.push(this.assertSecretExists(teamId, value.secret, where));
        return { secret: value.secret };
      }
      needsCipher();
      if (isSealedValue(value)) {
        // Only a value this team's rows hold decrypts under the team's binding.
        this.assertOpens(value.ciphertext, teamId, where);
        return value;
      }
      if (typeof value !== 'string') throw ApiError.invalid(where, 'must be a string');
      if (value === MASKED_VALUE || /^<secret:.*>$/.test(value)) {
        throw ApiError.invalid(
          where,
          `is a masked value with nothing stored behind it: send the value or {"secret": "NAME"}`,
        );
      }
      return {
        ciphertext: this.secrets.cipher.encrypt(value, teamId).toString('base64'),
      };
    });
    await Promise.all(checks);
    return sealed;
  }

  /** The servers with real values, for the execution only; McpSecretError names what is missing. */
  async reveal(
    teamId: string,
    servers: Record<string, StoredMcpServerConfig>,
  ): Promise<Record<string, McpServerConfig>> {
    const revealed: Record<string, McpServerConfig> = {};
    for (const [name, server] of Object.entries(servers)) {
      const copy: McpServerConfig = { ...server, env: undefined, headers: undefined };
      for (const mapKey of MCP_SECRET_MAPS) {
        const values = server[mapKey];
        if (!values) {
          delete copy[mapKey];
          continue;
        }
        const plain: Record<string, string> = {};
        for (const [key, value] of Object.entries(values)) {
          plain[key] = await this.revealOne(teamId, value, `mcp_servers.${name}.${mapKey}.${key}`);
        }
        copy[mapKey] = plain;
      }
      revealed[name] = copy;
    }
    return revealed;
  }

  private async revealOne(teamId: string, value: McpSecretValue, where: string): Promise<string> {
    if (typeof value === 'string') return value; // stored before sealing (see the migration)
    if (isSecretReference(value)) {
      if (!this.secrets.cipher.enabled) {
        throw new McpSecretError(
          `${where}: team secret "${value.secret}" cannot be read: this server has no AMBIENT_SECRETS_KEY`,
        );
      }
      const plain = await this.secrets.reveal(teamId, value.secret);
      if (plain === null) {
        throw new McpSecretError(
          `${where}: the team has no secret named "${value.secret}" (was it deleted?)`,
        );
      }
      return plain;
    }
    try {
      return this.secrets.cipher.decrypt(Buffer.from(value.ciphertext, 'base64'), teamId);
    } catch (err) {
      if (err instanceof SecretDecryptionError || err instanceof ApiError) {
        throw new McpSecretError(`${where}: the stored value cannot be decrypted: ${err.message}`);
      }
      throw err;
    }
  }

  private async assertSecretExists(teamId: string, name: string, where: string): Promise<void> {
    if (!(await this.secrets.find(teamId, name))) {
      throw ApiError.invalid(`${where}.secret`, `the team has no secret named "${name}"`);
    }
  }

  private assertOpens(ciphertext: string, teamId: string, where: string): void {
    try {
      this.secrets.cipher.decrypt(Buffer.from(ciphertext, 'base64'), teamId);
    } catch (err) {
      if (!(err instanceof SecretDecryptionError)) throw err;
      throw ApiError.invalid(where, 'is not a value this team stores');
    }
  }
}
