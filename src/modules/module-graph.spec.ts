import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const MODULES = __dirname;
const SRC = join(__dirname, '..');
const EXTENSIONS = join(SRC, 'extensions');
/** Type-only imports and re-exports: erased, so they never take part in load order. */
const TYPE_ONLY = /^(?:import|export)\s+type\s[^;]*;/gm;
const IMPORT = /(?:from\s+|import\s*\(\s*|import\s+)['"](\.{1,2}\/[^'"]*)['"]/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [path] : [];
  });
}

/**
 * The module folder a path is in or names (`runs`, `execution`, … : a file inside it, or the
 * folder itself, i.e. its index.ts); each file of src/extensions on its own (`extensions/index`:
 * modules import the extension points, the built-in extension imports modules); null elsewhere.
 */
function moduleOf(path: string): string | null {
  const inExtensions = relative(EXTENSIONS, path);
  if (!inExtensions.startsWith('..')) {
    return `extensions/${inExtensions.replace(/\.ts$/, '') || 'index'}`;
  }
  const rel = relative(MODULES, path);
  if (!rel || rel.startsWith('..')) return null;
  if (!rel.includes(sep)) return existsSync(path) && statSync(path).isDirectory() ? rel : null;
  return rel.split(sep)[0];
}

/** `from → to` for every (runtime) import of one module folder by another, with one file that does it. */
function moduleImports(): Map<string, string> {
  const edges = new Map<string, string>();
  for (const file of [...sourceFiles(MODULES), ...sourceFiles(EXTENSIONS)]) {
    const from = moduleOf(file);
    for (const [, specifier] of readFileSync(file, 'utf8')
      .replace(TYPE_ONLY, '')
      .matchAll(IMPORT)) {
      const to = moduleOf(resolve(dirname(file), specifier));
      if (from && to && from !== to) edges.set(`${from} -> ${to}`, relative(SRC, file));
    }
  }
  return edges;
}

/** A cycle `a -> b -> … -> a` among the modules, with the file behind each step, or [] for none. */
function firstCycle(edges: Map<string, string>): string[] {
  const next = new Map<string, string[]>();
  for (const edge of edges.keys()) {
    const [from, to] = edge.split(' -> ');
    next.set(from, [...(next.get(from) ?? []), to]);
  }
  const done = new Set<string>();
  const visit = (module: string, path: string[]): string[] => {
    const seen = path.indexOf(module);
    if (seen >= 0) return [...path.slice(seen), module];
    if (done.has(module)) return [];
    for (const to of next.get(module) ?? []) {
      const cycle = visit(to, [...path, module]);
      if (cycle.length > 0) return cycle;
    }
    done.add(module);
    return [];
  };
  for (const module of next.keys()) {
    const cycle = visit(module, []);
    if (cycle.length > 0) {
      return cycle.map((m, i) => (i === 0 ? m : `${m} (${edges.get(`${cycle[i - 1]} -> ${m}`)})`));
    }
  }
  return [];
}

describe('module graph (src/modules)', () => {
  const edges = moduleImports();
  const imports = (a: string, b: string) => edges.has(`${a} -> ${b}`);

  it('has no cycle of modules: each module loads after the ones it imports', () => {
    expect(firstCycle(edges)).toEqual([]);
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
