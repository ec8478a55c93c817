import { cloneUrl } from './environment-config';

describe('environment repositories', () => {
  it('builds clone URLs from a URL or a directory base', () => {
    expect(cloneUrl('https://github.com/', 'acme', 'web')).toBe('https://github.com/acme/web.git');
    expect(cloneUrl('/srv/git', 'acme', 'web')).toBe('/srv/git/acme/web.git');
  });

  it.each([
    ['..', 'other'],
    ['acme', '..'],
    ['.', 'web'],
    ['a/b', 'web'],
    ['acme', '-web'],
    ['-u', 'web'],
    ['', 'web'],
    ['acme', 'we\0b'],
  ])('refuses to build a clone URL from %j / %j (rows stored before validation)', (owner, repo) => {
    expect(() => cloneUrl('/srv/git', owner, repo)).toThrow('invalid repository name');
  });
});
