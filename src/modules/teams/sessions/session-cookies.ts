import type { IncomingHttpHeaders } from 'node:http';
import type { CookieOptions } from 'express';

/** The session's random id (HttpOnly: page scripts never see it). */
export const SESSION_COOKIE = 'ambient_session';
/** The session's CSRF token, readable by the console, which echoes it as CSRF_HEADER. */
export const CSRF_COOKIE = 'ambient_csrf';
export const CSRF_HEADER = 'x-csrf-token';

/** The cookies of a request (`Cookie: a=1; b=2`); a name sent twice keeps its first value. */
export function cookiesOf(headers: IncomingHttpHeaders): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    const name = part.slice(0, Math.max(eq, 0)).trim();
    if (!name || cookies.has(name)) continue;
    try {
      cookies.set(name, decodeURIComponent(part.slice(eq + 1).trim()));
    } catch {
      // A malformed escape is no cookie of ours.
    }
  }
  return cookies;
}

/**
 * Attributes of Ambient's cookies: SameSite=Lax (sent on the provider's redirect back, a top-level
 * GET, but not on cross-site POSTs), Secure when the public URL is https, on every path.
 */
export function cookieOptions(
  publicUrl: string,
  options: { httpOnly: boolean; maxAgeMs?: number; path?: string },
): CookieOptions {
  return {
    httpOnly: options.httpOnly,
    secure: publicUrl.startsWith('https:'),
    sameSite: 'lax',
    path: options.path ?? '/',
    ...(options.maxAgeMs !== undefined ? { maxAge: options.maxAgeMs } : {}),
  };
}

/** Safe methods read only: no CSRF token needed. */
export function changesState(method: string): boolean {
  return !['GET', 'HEAD', 'OPTIONS'].includes(method.toUpperCase());
}
