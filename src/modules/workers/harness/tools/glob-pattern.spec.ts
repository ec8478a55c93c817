import { globToRegExp } from './glob-pattern';

describe('globToRegExp', () => {
  const matches = (glob: string, path: string) => {
    const { regexp, matchesBaseName } = globToRegExp(glob);
    return regexp.test(matchesBaseName ? (path.split('/').pop() ?? path) : path);
  };

  it.each([
    ['*.ts', 'src/a.ts', true],
    ['*.ts', 'src/a.tsx', false],
    ['*.{ts,js}', 'lib/b.js', true],
    ['src/*.ts', 'src/a.ts', true],
    ['src/*.ts', 'src/deep/a.ts', false],
    ['src/**/*.ts', 'src/deep/er/a.ts', true],
    ['src/**/*.ts', 'src/a.ts', true],
    ['file?.md', 'file1.md', true],
    ['a.b', 'axb', false],
    ['(x)+.txt', '(x)+.txt', true],
  ])('%s matches %s: %s', (glob, path, expected) => {
    expect(matches(glob, path)).toBe(expected);
  });
});
