import { cloneUrl, gitEnv, lastLines, shellQuote } from './setup-steps';

describe('setup steps', () => {
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

  it('passes a token to git as an auth header in its environment, never on the command line', () => {
    expect(gitEnv(null)).toEqual({ GIT_TERMINAL_PROMPT: '0' });
    const env = gitEnv('s3cret');
    expect(env).toMatchObject({ GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'http.extraHeader' });
    const header = env.GIT_CONFIG_VALUE_0.replace('Authorization: Basic ', '');
    expect(Buffer.from(header, 'base64').toString()).toBe('x-access-token:s3cret');
  });

  it('quotes for the shell and keeps the last non-empty lines', () => {
    expect(shellQuote(`it's`)).toBe(`'it'\\''s'`);
    expect(lastLines('a\n\nb\nc\n', 2)).toBe('b\nc');
  });
});
