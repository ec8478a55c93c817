/**
 * Compiles a glob (`*`, `?`, `**`, `{a,b}`) into a RegExp over `/`-separated relative paths.
 * A glob without `/` matches the file name alone, so `*.ts` finds TypeScript files anywhere.
 */
export function globToRegExp(glob: string): { regexp: RegExp; matchesBaseName: boolean } {
  let source = '';
  let braces = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      const slashAfter = glob[i + 2] === '/';
      source += slashAfter ? '(?:.*/)?' : '.*';
      i += slashAfter ? 2 : 1;
    } else if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else if (c === '{') {
      braces++;
      source += '(?:';
    } else if (c === '}' && braces > 0) {
      braces--;
      source += ')';
    } else if (c === ',' && braces > 0) source += '|';
    else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  source += ')'.repeat(braces);
  return { regexp: new RegExp(`^${source}$`), matchesBaseName: !glob.includes('/') };
}
