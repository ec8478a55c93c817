import { csrfHeaders } from './client';

/** Whether the server offers single sign-on, and where it starts. */
export interface SsoConfig {
  enabled: boolean;
  login_url: string | null;
}

export async function ssoConfig(): Promise<SsoConfig> {
  const res = await fetch('/api/v1/auth/oidc/config');
  if (!res.ok) return { enabled: false, login_url: null };
  return (await res.json()) as SsoConfig;
}

/** Whether this browser holds a live SSO session (asked without the 401 handler: none is fine). */
export async function hasSession(): Promise<boolean> {
  const res = await fetch('/api/v1/me', { credentials: 'same-origin' });
  return res.ok;
}

/** Ends the SSO session on the server (every replica) and clears its cookies. */
export async function signOutOfSession(): Promise<void> {
  const res = await fetch('/api/v1/auth/logout', {
    method: 'POST',
    credentials: 'same-origin',
    headers: csrfHeaders('POST'),
  });
  if (!res.ok) throw new Error(`Signing out failed (${res.status}).`);
}
