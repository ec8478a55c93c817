import { ApiError } from '../../common/errors/api-error';
import { SECRET_NAME_PATTERN } from './dto/secret.dto';
import { isSealedValue, isSecretReference } from './mcp-secret-values';
import type { StoredMcpServerConfig } from '../run-config';

/**
 * Checks an `mcp_servers` map (each entry has exactly one of warp_id, command or url). `field`
 * names the map in errors: `config.mcp_servers` on a run, `agent_config.mcp_servers` on a
 * schedule, `mcp_servers` on an agent identity.
 */
export function assertMcpServers(
  servers: Record<string, StoredMcpServerConfig>,
  mapField = 'config.mcp_servers',
): void {
  for (const [name, server] of Object.entries(servers)) {
    const field = `${mapField}.${name}`;
    if (!server || typeof server !== 'object') throw ApiError.invalid(field, 'must be an object');
    const kinds = (['warp_id', 'command', 'url'] as const).filter((k) => server[k] !== undefined);
    if (kinds.length !== 1) {
      throw ApiError.invalid(field, 'must have exactly one of warp_id, command or url');
    }
    if (server.url !== undefined) {
      let protocol: string;
      try {
        protocol = new URL(server.url).protocol;
      } catch {
        throw ApiError.invalid(`${field}.url`, 'must be a valid URL');
      }
      if (protocol !== 'http:' && protocol !== 'https:') {
        throw ApiError.invalid(`${field}.url`, 'must be an http or https URL');
      }
    }
    if (
      server.args !== undefined &&
      !(Array.isArray(server.args) && server.args.every((a) => typeof a === 'string'))
    ) {
      throw ApiError.invalid(`${field}.args`, 'must be an array of strings');
    }
    for (const key of ['env', 'headers'] as const) {
      const map = server[key];
      if (map === undefined) continue;
      if (typeof map !== 'object' || map === null || Array.isArray(map)) {
        throw ApiError.invalid(`${field}.${key}`, MAP_RULE);
      }
      for (const [name, value] of Object.entries(map)) {
        if (typeof value === 'string' || isSealedValue(value)) continue;
        if (!isSecretReference(value)) throw ApiError.invalid(`${field}.${key}.${name}`, MAP_RULE);
        if (!SECRET_NAME_PATTERN.test(value.secret)) {
          throw ApiError.invalid(`${field}.${key}.${name}.secret`, 'must be a team secret name');
        }
      }
    }
  }
}

const MAP_RULE = 'must map names to strings or to {"secret": "NAME"} (a team secret)';
