import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const MODULES = __dirname;
const IMPORT = /(?:from\s+|import\s*\(\s*)['"](\.{1,2}\/[^'"]*)['"]/g;

/**
 * Folder pairs that import each other, each for the reason docs/DESIGN.md §3 "Module graph" gives.
 * A new pair fails this spec: break it (register, move the shared vocabulary down) or document it.
 */
const DOCUMENTED_PAIRS = [
  'artifacts <-> runs',
  'environments <-> runs',
  'factories <-> webhooks',
  'runs <-> skills',
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** The module folder a path is in (`runs`, `execution`, …), or null outside src/modules. */
function moduleOf(path: string): string | null {
  const rel = relative(MODULES, path);
  if (rel.startsWith('..') || !rel.includes(sep)) return null;
  return rel.split(sep)[0];
}

/** `from → to` for every import of one module folder by another, with one file that does it. */
function moduleImports(): Map<string, string> {
  const edges = new Map<string, string>();
  for (const file of sourceFiles(MODULES)) {
    const from = moduleOf(file);
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const to = moduleOf(resolve(dirname(file), specifier));
      if (from && to && from !== to) edges.set(`${from} -> ${to}`, relative(MODULES, file));
    }
  }
  return edges;
}

describe('module graph (src/modules)', () => {
  const edges = moduleImports();
  const imports = (a: string, b: string) => edges.has(`${a} -> ${b}`);

  it('has no pair of modules importing each other but the documented ones', () => {
    const modules = [...new Set([...edges.keys()].flatMap((edge) => edge.split(' -> ')))].sort();
    const pairs = modules.flatMap((a) =>
      modules.filter((b) => a < b && imports(a, b) && imports(b, a)).map((b) => `${a} <-> ${b}`),
    );
    expect(pairs).toEqual(DOCUMENTED_PAIRS);
  });

  it('keeps execution above runs and environments: they never import it', () => {
    const upward = [...edges].filter(([edge]) => /^(runs|environments) -> execution$/.test(edge));
    expect(upward).toEqual([]);
  });

  it('reads the imports it checks (a module graph that is not empty)', () => {
    expect(imports('execution', 'runs')).toBe(true);
    expect(edges.size).toBeGreaterThan(20);
  });
});
