import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const SRC = join(__dirname, '..');
/** Type-only imports and re-exports: erased, so they never take part in load order. */
const TYPE_ONLY = /^(?:import|export)\s+type\s[^;]*;/gm;
const IMPORT = /(?:from\s+|import\s*\(\s*|import\s+)['"](\.{1,2}\/[^'"]*)['"]/g;
/** What composes the modules (and the programs): a module never imports these, not even a type. */
const ABOVE_MODULES = ['bootstrap', 'extensions', 'ingress', 'cli', 'self-hosted-worker'];

function sourceFiles(dir: string, specs = false): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path, specs);
    return name.endsWith('.ts') && (specs || !name.endsWith('.spec.ts')) ? [path] : [];
  });
}

/**
 * The unit a path is in or names: each module folder of src/modules (`runs`, `workers`, … : a file
 * inside it, or the folder itself, i.e. its index.ts), each other folder of src (`bootstrap`,
 * `extensions`, `ingress`, `common`, `config`, `database`, `cli`, `self-hosted-worker`), and
 * src's own files (main.ts, app.module.ts: what starts the program) in `bootstrap`; null outside src.
 */
function unitOf(path: string): string | null {
  const rel = relative(SRC, path);
  if (!rel || rel.startsWith('..')) return null;
  const [top, ...rest] = rel.split(sep);
  if (top !== 'modules') {
    const isFolder = rest.length > 0 || (existsSync(path) && statSync(path).isDirectory());
    return isFolder ? top : 'bootstrap';
  }
  if (rest.length === 0) return null;
  if (rest.length === 1 && !(existsSync(path) && statSync(path).isDirectory())) return null;
  return rest[0];
}

/** Every relative import of a file: its unit, the imported path's, and whether it is type-only. */
function importsOf(file: string): { from: string | null; to: string | null; typeOnly: boolean }[] {
  const text = readFileSync(file, 'utf8');
  const runtime = new Set([...text.replace(TYPE_ONLY, '').matchAll(IMPORT)].map((m) => m[1]));
  return [...text.matchAll(IMPORT)].map(([, specifier]) => ({
    from: unitOf(file),
    to: unitOf(resolve(dirname(file), specifier)),
    typeOnly: !runtime.has(specifier),
  }));
}

/** `from → to` for every (runtime) import of one unit by another, with one file that does it. */
function unitImports(): Map<string, string> {
  const edges = new Map<string, string>();
  for (const file of sourceFiles(SRC)) {
    for (const { from, to, typeOnly } of importsOf(file)) {
      if (from && to && from !== to && !typeOnly) {
        edges.set(`${from} -> ${to}`, relative(SRC, file));
      }
    }
  }
  return edges;
}

/** A cycle `a -> b -> … -> a` among the units, with the file behind each step, or [] for none. */
function firstCycle(edges: Map<string, string>): string[] {
  const next = new Map<string, string[]>();
  for (const edge of edges.keys()) {
    const [from, to] = edge.split(' -> ');
    next.set(from, [...(next.get(from) ?? []), to]);
  }
  const done = new Set<string>();
  const visit = (unit: string, path: string[]): string[] => {
    const seen = path.indexOf(unit);
    if (seen >= 0) return [...path.slice(seen), unit];
    if (done.has(unit)) return [];
    for (const to of next.get(unit) ?? []) {
      const cycle = visit(to, [...path, unit]);
      if (cycle.length > 0) return cycle;
    }
    done.add(unit);
    return [];
  };
  for (const unit of next.keys()) {
    const cycle = visit(unit, []);
    if (cycle.length > 0) {
      return cycle.map((u, i) => (i === 0 ? u : `${u} (${edges.get(`${cycle[i - 1]} -> ${u}`)})`));
    }
  }
  return [];
}

describe('module graph (src/modules and the rest of src)', () => {
  const edges = unitImports();
  const imports = (a: string, b: string) => edges.has(`${a} -> ${b}`);

  it('has no cycle of units: each module and each folder of src loads after the ones it imports', () => {
    expect(firstCycle(edges)).toEqual([]);
  });

  it('keeps workers above runs and environments: they never import it', () => {
    const upward = [...edges].filter(([edge]) => /^(runs|environments) -> workers$/.test(edge));
    expect(upward).toEqual([]);
  });

  it('keeps the modules below what composes them: no module imports bootstrap, extensions, ingress, cli or the self-hosted worker', () => {
    const modules = join(SRC, 'modules');
    const upward = sourceFiles(modules, true).flatMap((file) =>
      importsOf(file)
        .filter(({ to }) => to !== null && ABOVE_MODULES.includes(to))
        .map(({ to }) => `${relative(SRC, file)} -> ${to}`),
    );
    expect(upward).toEqual([]);
  });

  it('reads the imports it checks (a graph of modules and the folders around them)', () => {
    expect(imports('workers', 'runs')).toBe(true);
    expect(imports('bootstrap', 'extensions')).toBe(true);
    expect(imports('extensions', 'workers')).toBe(true);
    expect(imports('config', 'common')).toBe(true);
    expect(edges.size).toBeGreaterThan(20);
  });
});
