import { ValidateBy, ValidationOptions } from 'class-validator';

/**
 * Why `name` cannot be one component of a host path (a directory or clone URL built from it), or
 * null when it can: empty, `.`, `..`, separators, NUL and a leading `-` (an option to git) are
 * refused.
 */
export function pathComponentProblem(name: unknown): string | null {
  if (typeof name !== 'string' || name === '') return 'must not be empty';
  if (name === '.' || name === '..') return `must not be "${name}"`;
  if (/[/\\\0]/.test(name)) return 'must not contain "/", "\\" or NUL';
  if (name.startsWith('-')) return 'must not start with "-"';
  return null;
}

/** class-validator: the property is a safe path component (see pathComponentProblem). */
export function IsPathComponent(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isPathComponent',
      validator: {
        validate: (value: unknown) => pathComponentProblem(value) === null,
        defaultMessage: (args) => `$property ${pathComponentProblem(args?.value) ?? ''}`,
      },
    },
    options,
  );
}
