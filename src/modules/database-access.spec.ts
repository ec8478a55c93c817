import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/**
 * Where SQL may live: a module's repository classes (files named `*.repository.ts`) and
 * src/database. Everything else (services, controllers, sweepers, workers...) calls a repository
 * method; a repository method takes an optional `EntityManager` to join its caller's transaction.
 * A module reads and writes only its own tables: another module's rows come through a method of
 * that module's repository, exported from its barrel (TypeORM relation declarations may stay).
 */
const SRC = join(__dirname, '..');
const MODULES = join(SRC, 'modules');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** The code of a file without its comments (block comments, and lines that are a `//` comment). */
function codeOf(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

/** The module a file of src/modules is in (`runs`, `webhooks`...), null elsewhere in src. */
function moduleOf(file: string): string | null {
  const rel = relative(MODULES, file);
  if (rel.startsWith('..')) return null;
  const parts = rel.split(sep);
  return parts.length > 1 ? parts[0] : null;
}

const isRepository = (file: string) => file.endsWith('.repository.ts');
const isDatabaseFolder = (file: string) => !relative(join(SRC, 'database'), file).startsWith('..');

/** Statements and the ORM's data access: what only repositories (and src/database) may do. */
const MANAGER_CALLS =
  'insert|update|delete|find\\w*|save|count\\w*|upsert|increment|decrement|remove|exists\\w*|softDelete|restore|sum|average|minimum|maximum|preload|query';
const DATABASE_ACCESS: [string, RegExp][] = [
  ['query', /\.query\s*\(/],
  ['createQueryBuilder', /\bcreateQueryBuilder\s*\(/],
  ['getRepository', /\bgetRepository\s*\(/],
  ['InjectRepository', /@InjectRepository\s*\(/],
  ['manager calls', new RegExp(`\\b\\w*[mM]anager\\.(?:${MANAGER_CALLS})\\s*\\(`)],
];

/** Each module's entities, by class name and by table, read from their `@Entity('table')`. */
function entities(): { byClass: Map<string, string>; byTable: Map<string, string> } {
  const byClass = new Map<string, string>();
  const byTable = new Map<string, string>();
  const entity =
    /@Entity\(\s*(?:\{\s*name:\s*)?'(\w+)'[^)]*\)(?:\s*@\w+\([^)]*\))*\s*export class (\w+)/g;
  for (const file of sourceFiles(MODULES)) {
    const owner = moduleOf(file);
    if (!owner || !file.endsWith('.entity.ts')) continue;
    for (const [, table, name] of readFileSync(file, 'utf8').matchAll(entity)) {
      byClass.set(name, owner);
      byTable.set(table, owner);
    }
  }
  return { byClass, byTable };
}

/** Tables named in the file's SQL (after FROM, JOIN, INTO, UPDATE, TABLE; SQL is upper case here). */
function tablesInSql(code: string): Set<string> {
  const named = /\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+`?(\w+)`?/g;
  return new Set([...code.matchAll(named)].map((m) => m[1]));
}

/** Entity classes the file hands to the ORM for data access (repositories, query builders, joins). */
function entitiesAccessed(code: string): Set<string> {
  const single =
    /\b(?:getRepository|createQueryBuilder|InjectRepository|from|innerJoin|leftJoin|innerJoinAndSelect|leftJoinAndSelect|innerJoinAndMapOne|leftJoinAndMapOne)\s*\(\s*([A-Z]\w*)\b/g;
  const managed = new RegExp(
    `\\b\\w*[mM]anager\\.(?:${MANAGER_CALLS})\\s*\\(\\s*([A-Z]\\w*)\\b`,
    'g',
  );
  const features = /forFeature\s*\(\s*\[([^\]]*)\]/g;
  const names = [...code.matchAll(single), ...code.matchAll(managed)].map((m) => m[1]);
  for (const [, list] of code.matchAll(features))
    names.push(...list.split(/[\s,]+/).filter(Boolean));
  return new Set(names);
}

/** Every file of src that breaks a rule, with what it does. */
function violations(): Map<string, string[]> {
  const { byClass, byTable } = entities();
  const found = new Map<string, string[]>();
  const add = (file: string, what: string) => {
    const rel = `src/${relative(SRC, file).split(sep).join('/')}`;
    found.set(rel, [...(found.get(rel) ?? []), what]);
  };
  for (const file of sourceFiles(SRC)) {
    const code = codeOf(readFileSync(file, 'utf8'));
    if (!isRepository(file) && !isDatabaseFolder(file)) {
      const access = DATABASE_ACCESS.filter(([, pattern]) => pattern.test(code)).map(([w]) => w);
      if (access.length > 0)
        add(file, `database access outside a repository: ${access.join(', ')}`);
    }
    const owner = moduleOf(file);
    if (!owner) continue;
    for (const table of tablesInSql(code)) {
      const tableOwner = byTable.get(table);
      if (tableOwner && tableOwner !== owner) add(file, `SQL on ${tableOwner}'s table ${table}`);
    }
    for (const name of entitiesAccessed(code)) {
      const entityOwner = byClass.get(name);
      if (entityOwner && entityOwner !== owner)
        add(file, `data access to ${entityOwner}'s entity ${name}`);
    }
  }
  return found;
}

describe('database access (SQL only in repositories, each module on its own tables)', () => {
  const found = violations();

  it('keeps database access in repository files (*.repository.ts) and src/database', () => {
    const access = [...found]
      .filter(([, what]) => what.some((w) => w.startsWith('database access')))
      .map(([file, what]) => `${file}: ${what.join('; ')}`);
    expect(access).toEqual([]);
  });

  it("keeps each module on its own tables and entities (another module's rows come through its repository)", () => {
    const crossing = [...found].flatMap(([file, what]) =>
      what.filter((w) => !w.startsWith('database access')).map((w) => `${file}: ${w}`),
    );
    expect(crossing).toEqual([]);
  });

  it('reads the entities and the SQL it checks', () => {
    const { byClass, byTable } = entities();
    expect(byClass.get('Run')).toBe('runs');
    expect(byTable.get('webhook_deliveries')).toBe('webhooks');
    expect(tablesInSql('SELECT 1 FROM runs r JOIN `users` u ON u.id = r.creator_id')).toEqual(
      new Set(['runs', 'users']),
    );
    expect(entitiesAccessed('manager.getRepository(Team).findOneBy({ id })')).toEqual(
      new Set(['Team']),
    );
    expect(entitiesAccessed('this.manager.insert(User, row)')).toEqual(new Set(['User']));
  });
});
