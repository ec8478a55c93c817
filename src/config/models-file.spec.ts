import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from './app-config';
import { effectiveModelsFile, localModelsFile } from './models-file';

describe('effectiveModelsFile', () => {
  let dir: string;
  let shared: string;
  let local: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ambient-models-'));
    mkdirSync(join(dir, 'config'));
    shared = join(dir, 'config', 'models.yaml');
    local = join(dir, 'config', 'models.local.yaml');
    writeFileSync(shared, 'models: []\n');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('names the local file next to the configured catalogue', () => {
    expect(localModelsFile('config/models.yaml')).toBe(join('config', 'models.local.yaml'));
    expect(localModelsFile('/etc/ambient/catalogue.yml')).toBe('/etc/ambient/catalogue.local.yml');
  });

  it('uses the configured catalogue while there is no local file', () => {
    expect(effectiveModelsFile(shared, false)).toBe(shared);
  });

  it('prefers config/models.local.yaml over config/models.yaml when present', () => {
    writeFileSync(local, 'models: []\n');
    expect(effectiveModelsFile(shared, false)).toBe(local);
  });

  it('lets an explicit AMBIENT_MODELS_FILE win over the local file', () => {
    writeFileSync(local, 'models: []\n');
    expect(effectiveModelsFile(shared, true)).toBe(shared);
  });

  describe('in loadConfig', () => {
    const configFile = () => {
      const file = join(dir, 'default.yaml');
      const shipped = readFileSync(join(__dirname, '../../config/default.yaml'), 'utf8');
      // The shipped defaults with only models.file changed.
      writeFileSync(
        file,
        shipped.replace(/^models:\n(?: {2}.*\n)+/m, `models:\n  file: ${shared}\n`),
      );
      return file;
    };

    it('applies the order: AMBIENT_MODELS_FILE, then the local file, then the configured one', () => {
      const env = { AMBIENT_CONFIG_FILE: configFile() };
      expect(loadConfig(env).models.file).toBe(shared);
      writeFileSync(local, 'models: []\n');
      expect(loadConfig(env).models.file).toBe(local);
      const chosen = join(dir, 'elsewhere.yaml');
      expect(loadConfig({ ...env, AMBIENT_MODELS_FILE: chosen }).models.file).toBe(chosen);
    });
  });
});
