import type { BoundSecret } from '../../../../common/egress/egress-policy';

/**
 * Puts the values of `secrets` in place of their placeholders in raw header values (name, value,
 * name, value…), including inside `Basic` credentials, which git builds from URL userinfo.
 * Returns the same array when nothing changed.
 */
export function injectIntoHeaders(rawHeaders: string[], secrets: readonly BoundSecret[]): string[] {
  if (secrets.length === 0) return rawHeaders;
  let changed = false;
  const result = rawHeaders.map((item, i) => {
    if (i % 2 === 0) return item;
    const name = rawHeaders[i - 1].toLowerCase();
    let value = replacePlaceholders(item, secrets);
    if (name === 'authorization') {
      value = injectIntoBasic(value, secrets);
    }
    if (value !== item) changed = true;
    return value;
  });
  return changed ? result : rawHeaders;
}

/** `Basic base64(user:pass)` with placeholders replaced inside the decoded credentials. */
function injectIntoBasic(value: string, secrets: readonly BoundSecret[]): string {
  const basic = /^(basic\s+)([A-Za-z0-9+/=]+)\s*$/i.exec(value);
  if (!basic) return value;
  const decoded = Buffer.from(basic[2], 'base64').toString('utf8');
  const injected = replacePlaceholders(decoded, secrets);
  if (injected === decoded) return value;
  return `${basic[1]}${Buffer.from(injected, 'utf8').toString('base64')}`;
}

export function replacePlaceholders(text: string, secrets: readonly BoundSecret[]): string {
  let result = text;
  for (const secret of secrets) {
    if (secret.placeholder && result.includes(secret.placeholder)) {
      result = result.split(secret.placeholder).join(secret.value);
    }
  }
  return result;
}

/**
 * The Authorization header a plain-HTTP request's URL userinfo stands for (placeholders
 * replaced), or null when the URL has none. The origin never sees userinfo in the request line.
 */
export function basicFromUserinfo(url: URL, secrets: readonly BoundSecret[]): string | null {
  if (!url.username && !url.password) return null;
  const user = replacePlaceholders(percentDecoded(url.username), secrets);
  const password = replacePlaceholders(percentDecoded(url.password), secrets);
  return `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
}

/** `text` percent-decoded, or as it is when it holds a `%` that starts no escape. */
function percentDecoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
