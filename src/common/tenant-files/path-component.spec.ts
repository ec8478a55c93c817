import { pathComponentProblem } from './path-component';

describe('pathComponentProblem', () => {
  it.each(['acme', 'web.app', '.github', 'a-b_c', 'x..y'])('accepts %j', (name) => {
    expect(pathComponentProblem(name)).toBeNull();
  });

  it.each([
    ['', 'must not be empty'],
    ['.', 'must not be "."'],
    ['..', 'must not be ".."'],
    ['a/b', 'must not contain "/", "\\" or NUL'],
    ['a\\b', 'must not contain "/", "\\" or NUL'],
    ['a\0b', 'must not contain "/", "\\" or NUL'],
    ['-upload-pack=x', 'must not start with "-"'],
  ])('refuses %j', (name, why) => {
    expect(pathComponentProblem(name)).toBe(why);
  });
});
