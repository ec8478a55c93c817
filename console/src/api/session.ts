/**
 * Two ways to be signed in: an API key pasted into the console (kept in sessionStorage: gone when
 * the tab closes), or single sign-on, whose session is an HttpOnly cookie the console never sees;
 * only its CSRF token is readable, from the `ambient_csrf` cookie.
 */
const KEY = 'ambient.apiKey';

export function storedKey(): string | null {
  return sessionStorage.getItem(KEY);
}

export function storeKey(key: string): void {
  sessionStorage.setItem(KEY, key);
}

export function forgetKey(): void {
  sessionStorage.removeItem(KEY);
}

/** The SSO session's CSRF token, sent as `x-csrf-token` on every call that changes something. */
export function csrfToken(): string | null {
  const match = /(?:^|;\s*)ambient_csrf=([^;]+)/.exec(document.cookie);
  return match ? decodeURIComponent(match[1]) : null;
}
