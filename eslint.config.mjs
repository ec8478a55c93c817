// typescript-eslint's recommended rules without type information (fast, no tsconfig project);
// eslint-config-prettier last, so formatting is Prettier's alone.
import { dirname, relative, resolve, sep } from 'node:path';
import { defineConfig, globalIgnores } from 'eslint/config';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

const MODULES = resolve(import.meta.dirname, 'src/modules');

/** The module folder (`runs`, `execution`, …) a path is in, and the rest of the path. */
function moduleOf(path) {
  const rel = relative(MODULES, path);
  if (rel.startsWith('..') || !rel) return null;
  const [name, ...rest] = rel.split(sep);
  return { name, rest: rest.join('/') };
}

/**
 * Modules import each other only through their index.ts (what the module offers the others);
 * their own files import each other freely. docs/DESIGN.md §3 "Module graph".
 */
const moduleBoundaries = {
  rules: {
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
  globalIgnores(['dist/', 'node_modules/', 'coverage/', 'var/']),
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
    files: ['src/modules/**/*.ts'],
    plugins: { ambient: moduleBoundaries },
    rules: { 'ambient/import-through-index': 'error' },
  },
  prettier,
);
