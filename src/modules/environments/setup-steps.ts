/** `<base>/<owner>/<repo>.git`; the base is a URL (https://github.com) or a local directory. */
export function cloneUrl(base: string, owner: string, repo: string): string {
  return `${base.replace(/\/+$/, '')}/${owner}/${repo}.git`;
}

export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The last `count` non-empty lines of a command's output. */
export function lastLines(output: string, count: number): string {
  return output
    .split('\n')
    .filter((line) => line.trim())
    .slice(-count)
    .join('\n');
}

/** The token goes in an HTTP header through git's environment config, never on a command line. */
export function gitEnv(token: string | null): Record<string, string> {
  const env: Record<string, string> = { GIT_TERMINAL_PROMPT: '0' };
  if (!token) return env;
  const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
  return {
    ...env,
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: 'http.extraHeader',
    GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
  };
}
