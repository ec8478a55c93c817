// typescript-eslint's recommended rules without type information (fast, no tsconfig project),
// and two type-aware promise rules on src;
// eslint-config-prettier last, so formatting is Prettier's alone.
import { dirname, relative, resolve, sep } from 'node:path';
import { defineConfig, globalIgnores } from 'eslint/config';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

const SRC = resolve(import.meta.dirname, 'src');
const MODULES = resolve(SRC, 'modules');
/** What composes the modules and the programs (src/modules/module-graph.spec.ts says the same). */
const ABOVE_MODULES = ['bootstrap', 'extensions', 'ingress', 'cli', 'self-hosted-worker'];

/** The module folder (`runs`, `workers`, …) a path is in, and the rest of the path. */
function moduleOf(path) {
  const rel = relative(MODULES, path);
  if (rel.startsWith('..') || !rel) return null;
  const [name, ...rest] = rel.split(sep);
  return { name, rest: rest.join('/') };
}

/**
 * Modules import each other only through their index.ts (what the module offers the others);
 * their own files import each other freely. docs/DESIGN.md "Module graph".
 */
const moduleBoundaries = {
  rules: {
    // No module imports what composes the modules (bootstrap, extensions, ingress, cli, the
    // self-hosted worker, src's own files), not even a type.
    'below-composition': {
      meta: {
        type: 'problem',
        messages: {
          upward:
            "a module never imports src/{{unit}} ('{{specifier}}'): it composes the modules, so the import closes a cycle (src/modules/module-graph.spec.ts)",
        },
      },
      create(context) {
        if (!moduleOf(context.filename)) return {};
        const check = (source) => {
          const specifier = source?.value;
          if (typeof specifier !== 'string' || !specifier.startsWith('.')) return;
          const rel = relative(SRC, resolve(dirname(context.filename), specifier));
          if (rel.startsWith('..')) return;
          const [unit, ...rest] = rel.split(sep);
          // src's own files (main.ts, app.module.ts) start the program: above the modules too.
          const srcFile = rest.length === 0 && unit !== 'modules';
          if (srcFile || ABOVE_MODULES.includes(unit)) {
            context.report({ node: source, messageId: 'upward', data: { unit, specifier } });
          }
        };
        return {
          ImportDeclaration: (node) => check(node.source),
          ExportNamedDeclaration: (node) => check(node.source),
          ExportAllDeclaration: (node) => check(node.source),
          ImportExpression: (node) => check(node.source),
        };
      },
    },
    'import-through-index': {
      meta: {
        type: 'problem',
        messages: {
          internal:
            "import module '{{module}}' through its index.ts ('{{suggestion}}'), not its file '{{specifier}}'",
        },
      },
      create(context) {
        const own = moduleOf(context.filename);
        if (!own || !own.rest) return {};
        const check = (source) => {
          const specifier = source?.value;
          if (typeof specifier !== 'string' || !specifier.startsWith('.')) return;
          const target = moduleOf(resolve(dirname(context.filename), specifier));
          if (
            !target ||
            target.name === own.name ||
            target.rest === '' ||
            target.rest === 'index'
          ) {
            return;
          }
          const suggestion = relative(dirname(context.filename), resolve(MODULES, target.name));
          context.report({
            node: source,
            messageId: 'internal',
            data: { module: target.name, specifier, suggestion },
          });
        };
        return {
          ImportDeclaration: (node) => check(node.source),
          ExportNamedDeclaration: (node) => check(node.source),
          ExportAllDeclaration: (node) => check(node.source),
          ImportExpression: (node) => check(node.source),
        };
      },
    },
  },
};

export default defineConfig(
  globalIgnores(['dist/', 'node_modules/', 'coverage/', 'var/', 'test-results/']),
  tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
    },
  },
  {
    // Type-aware, on the service's code only (a promise nobody awaits loses its rejection, and one
    // handed to a callback that expects void runs unobserved): slower, so not on tests and tools.
    files: ['src/**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    files: ['src/modules/**/*.ts'],
    plugins: { ambient: moduleBoundaries },
    rules: { 'ambient/import-through-index': 'error', 'ambient/below-composition': 'error' },
  },
  prettier,
);
