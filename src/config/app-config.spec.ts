import { hostname } from 'node:os';
import { ConfigError, loadConfig } from './app-config';

const base = { AMBIENT_CONFIG_FILE: 'config/default.yaml' };

describe('loadConfig', () => {
  it('reads the defaults', () => {
    const config = loadConfig(base);
    expect(config.server.port).toBe(8080);
    expect(config.roles).toEqual(['api', 'ingress', 'worker', 'scheduler']);
    expect(config.ingress.port).toBe(8081);
    expect(config.secretsKey).toBeUndefined();
    // Keys left unset come from key files (key-files.ts), never from a default in the file.
    expect(config.blobs.signingKey).toBeUndefined();
    expect(config.keys.dir).toBe('var/keys');
    expect(config.database.url).toBe('mysql://root@127.0.0.1:3306/ambient');
    expect(config.redis.url).toBe('redis://127.0.0.1:6379');
    expect(config.bootstrapApiKey).toBeUndefined();
    expect(config.webhooks.deliveriesPerMinute).toBe(60);
    expect(config.webhooks.authFailuresPerMinute).toBe(30);
    expect(config.webhooks.housekeepingBatch).toBe(1000);
    expect(config.webhooks.evaluationConcurrency).toBe(4);
  });

  it('reads the webhook evaluation concurrency from the environment, at least 1', () => {
    const config = loadConfig({ ...base, AMBIENT_WEBHOOK_EVALUATION_CONCURRENCY: '9' });
    expect(config.webhooks.evaluationConcurrency).toBe(9);
    expect(() => loadConfig({ ...base, AMBIENT_WEBHOOK_EVALUATION_CONCURRENCY: '0' })).toThrow(
      /AMBIENT_WEBHOOK_EVALUATION_CONCURRENCY/,
    );
  });

  it('lets the environment override the file', () => {
    const config = loadConfig({
      ...base,
      AMBIENT_PORT: '9000',
      AMBIENT_ROLES: 'worker, api',
      DATABASE_URL: 'mysql://u:p@db:3307/amb',
      AMBIENT_METADATA_FILTER_ENABLED: 'false',
      AMBIENT_BOOTSTRAP_API_KEY: 'a-long-enough-operator-key',
    });
    expect(config.server.port).toBe(9000);
    expect(config.roles).toEqual(['worker', 'api']);
    expect(config.database.url).toBe('mysql://u:p@db:3307/amb');
    expect(config.runs.metadataFilterEnabled).toBe(false);
    expect(config.bootstrapApiKey).toBe('a-long-enough-operator-key');
  });

  it.each([
    ['AMBIENT_PORT', 'abc', /^AMBIENT_PORT: must be a number/],
    ['AMBIENT_PORT', '70000', /^AMBIENT_PORT: must be at most 65535/],
    ['AMBIENT_ROLES', 'api,cook', /^AMBIENT_ROLES: unknown role "cook"/],
    ['DATABASE_URL', 'not a url', /^DATABASE_URL: must be a valid URL/],
    ['DATABASE_URL', 'postgres://x/y', /^DATABASE_URL: must start with mysql:\/\//],
    ['REDIS_URL', 'http://localhost', /^REDIS_URL: must start with redis:\/\//],
    [
      'AMBIENT_METADATA_FILTER_ENABLED',
      'maybe',
      /^AMBIENT_METADATA_FILTER_ENABLED: must be true or false/,
    ],
    ['AMBIENT_BOOTSTRAP_API_KEY', 'short', /^AMBIENT_BOOTSTRAP_API_KEY: must be at least 16/],
    ['AMBIENT_SECRETS_KEY', 'c2hvcnQ=', /^AMBIENT_SECRETS_KEY: must be 32 bytes/],
    ['AMBIENT_URL_SIGNING_KEY', 'short', /^AMBIENT_URL_SIGNING_KEY: must be at least 16/],
    ['AMBIENT_WEBHOOK_LOG_RETENTION_DAYS', '3', /must be at least 7/],
  ])('stops on %s=%s with one line naming it', (name, value, message) => {
    expect(() => loadConfig({ ...base, [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, [name]: value })).toThrow(message);
  });

  it('reads the environment snapshot settings, on by default, with on/off as the switch', () => {
    expect(loadConfig(base).environments.snapshots).toEqual({
      enabled: true,
      maxBytesPerTeam: 10 * 1024 ** 3,
      maxAgeHours: 168,
    });
    const off = loadConfig({
      ...base,
      AMBIENT_ENVIRONMENT_SNAPSHOTS: 'off',
      AMBIENT_SNAPSHOT_MAX_BYTES_PER_TEAM: '1048576',
      AMBIENT_SNAPSHOT_MAX_AGE_HOURS: '0.5',
    }).environments.snapshots;
    expect(off).toEqual({ enabled: false, maxBytesPerTeam: 1048576, maxAgeHours: 0.5 });
    expect(
      loadConfig({ ...base, AMBIENT_ENVIRONMENT_SNAPSHOTS: 'on' }).environments.snapshots.enabled,
    ).toBe(true);
    expect(() => loadConfig({ ...base, AMBIENT_SNAPSHOT_MAX_BYTES_PER_TEAM: '-1' })).toThrow(
      /^AMBIENT_SNAPSHOT_MAX_BYTES_PER_TEAM: must be at least 0/,
    );
    expect(() => loadConfig({ ...base, AMBIENT_ENVIRONMENT_SNAPSHOTS: 'sometimes' })).toThrow(
      /^AMBIENT_ENVIRONMENT_SNAPSHOTS: must be true or false/,
    );
  });

  it('names the workspace volume after the host unless AMBIENT_WORKSPACE_VOLUME says otherwise', () => {
    expect(loadConfig(base).runs.workspaceVolume).toBe(hostname());
    expect(loadConfig({ ...base, AMBIENT_WORKSPACE_VOLUME: 'nfs-1' }).runs.workspaceVolume).toBe(
      'nfs-1',
    );
    expect(() => loadConfig({ ...base, AMBIENT_WORKSPACE_VOLUME: 'v'.repeat(129) })).toThrow(
      'AMBIENT_WORKSPACE_VOLUME: at most 128 characters',
    );
  });

  it('reads AMBIENT_SECRETS_KEY as hex or base64', () => {
    const hex = 'ab'.repeat(32);
    expect(loadConfig({ ...base, AMBIENT_SECRETS_KEY: hex }).secretsKey).toEqual(
      Buffer.from(hex, 'hex'),
    );
    const b64 = Buffer.alloc(32, 7).toString('base64');
    expect(loadConfig({ ...base, AMBIENT_SECRETS_KEY: b64 }).secretsKey).toEqual(
      Buffer.alloc(32, 7),
    );
  });

  it('reads AMBIENT_SECRETS_PREVIOUS_KEYS beside the current key, never alone or repeating it', () => {
    const current = 'ab'.repeat(32);
    const previous = [Buffer.alloc(32, 1), Buffer.alloc(32, 2)];
    const env = {
      ...base,
      AMBIENT_SECRETS_KEY: current,
      AMBIENT_SECRETS_PREVIOUS_KEYS: previous.map((k) => k.toString('base64')).join(', '),
    };
    expect(loadConfig(env).secretsPreviousKeys).toEqual(previous);
    expect(loadConfig({ ...base, AMBIENT_SECRETS_KEY: current }).secretsPreviousKeys).toEqual([]);
    expect(() =>
      loadConfig({ ...base, AMBIENT_SECRETS_PREVIOUS_KEYS: previous[0].toString('hex') }),
    ).toThrow(/^AMBIENT_SECRETS_PREVIOUS_KEYS: set only beside AMBIENT_SECRETS_KEY/);
    expect(() => loadConfig({ ...env, AMBIENT_SECRETS_PREVIOUS_KEYS: current })).toThrow(
      /^AMBIENT_SECRETS_PREVIOUS_KEYS: must not contain the current/,
    );
    expect(() => loadConfig({ ...env, AMBIENT_SECRETS_PREVIOUS_KEYS: 'short' })).toThrow(
      /^AMBIENT_SECRETS_PREVIOUS_KEYS: must be 32 bytes/,
    );
  });

  it('allows no internal egress by default and checks AMBIENT_EGRESS_ALLOW', () => {
    expect(loadConfig(base).egress).toEqual({ allow: '' });
    const allow = '10.0.0.0/8, mcp.internal:8443';
    expect(loadConfig({ ...base, AMBIENT_EGRESS_ALLOW: allow }).egress).toEqual({ allow });
    expect(() => loadConfig({ ...base, AMBIENT_EGRESS_ALLOW: '10.0.0.0/8,http://x' })).toThrow(
      /^AMBIENT_EGRESS_ALLOW: "http:\/\/x" is not a block/,
    );
  });

  it('checks AMBIENT_DOCKER_IMAGES at start-up', () => {
    expect(loadConfig(base).sandbox.docker.images).toBeUndefined();
    const images = 'node:, registry.example.com/team/';
    expect(loadConfig({ ...base, AMBIENT_DOCKER_IMAGES: images }).sandbox.docker.images).toBe(
      images,
    );
    expect(() => loadConfig({ ...base, AMBIENT_DOCKER_IMAGES: 'node:,not an image' })).toThrow(
      /^AMBIENT_DOCKER_IMAGES: "not an image" is neither an image reference/,
    );
  });

  it('names a missing configuration file', () => {
    expect(() => loadConfig({ AMBIENT_CONFIG_FILE: 'config/nope.yaml' })).toThrow(
      /^AMBIENT_CONFIG_FILE: cannot read/,
    );
  });
});
