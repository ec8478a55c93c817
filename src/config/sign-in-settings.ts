import { ConfigError } from './config-error';
import { parseRoleMapping } from './role-mapping';
import type { Setting } from './setting-values';

export interface SignInSettings {
  oidcIssuer?: string;
  oidcClientId?: string;
  /** Unset = a public client (PKCE only, `token_endpoint_auth_method: none`). */
  oidcClientSecret?: string;
  /** Set by loadConfig when SSO is on: the configured URL or the public URL's callback. */
  oidcRedirectUrl?: string;
  oidcScopes: string;
  oidcRoleClaim: string;
  /** `value=team:role,...` (role-mapping.ts reads it; checked at start-up). */
  oidcRoleMapping?: string;
  sessionTtlHours: number;
}

export const SIGN_IN_SETTINGS: Setting[] = [
  { path: 'signIn.oidcIssuer', env: 'AMBIENT_OIDC_ISSUER', kind: 'url', optional: true },
  { path: 'signIn.oidcClientId', env: 'AMBIENT_OIDC_CLIENT_ID', kind: 'string', optional: true },
  {
    path: 'signIn.oidcClientSecret',
    env: 'AMBIENT_OIDC_CLIENT_SECRET',
    kind: 'string',
    optional: true,
  },
  { path: 'signIn.oidcRedirectUrl', env: 'AMBIENT_OIDC_REDIRECT_URL', kind: 'url', optional: true },
  { path: 'signIn.oidcScopes', env: 'AMBIENT_OIDC_SCOPES', kind: 'string' },
  { path: 'signIn.oidcRoleClaim', env: 'AMBIENT_OIDC_ROLE_CLAIM', kind: 'string' },
  {
    path: 'signIn.oidcRoleMapping',
    env: 'AMBIENT_OIDC_ROLE_MAPPING',
    kind: 'string',
    optional: true,
  },
  {
    path: 'signIn.sessionTtlHours',
    env: 'AMBIENT_SESSION_TTL_HOURS',
    kind: 'number',
    min: 0.01,
    max: 720,
  },
];

/**
 * SSO needs its client id and a role mapping that reads (a user mapped to no team is refused, so
 * an empty mapping would refuse everyone); the redirect URL defaults to the public URL's callback.
 */
export function checkSignInSettings(config: {
  signIn: SignInSettings;
  server: { publicUrl: string };
}): void {
  const s = config.signIn;
  if (!s.oidcIssuer) {
    const stray = s.oidcClientId
      ? 'AMBIENT_OIDC_CLIENT_ID'
      : s.oidcRoleMapping
        ? 'AMBIENT_OIDC_ROLE_MAPPING'
        : null;
    if (stray) throw new ConfigError(`${stray}: set only beside AMBIENT_OIDC_ISSUER`);
    return;
  }
  if (!s.oidcClientId)
    throw new ConfigError('AMBIENT_OIDC_CLIENT_ID: missing (AMBIENT_OIDC_ISSUER is set)');
  if (!s.oidcRoleMapping) {
    throw new ConfigError('AMBIENT_OIDC_ROLE_MAPPING: missing (AMBIENT_OIDC_ISSUER is set)');
  }
  try {
    parseRoleMapping(s.oidcRoleMapping);
  } catch (err) {
    throw new ConfigError(`AMBIENT_OIDC_ROLE_MAPPING: ${(err as Error).message}`);
  }
  if (!s.oidcScopes.split(/\s+/).includes('openid')) {
    throw new ConfigError(`AMBIENT_OIDC_SCOPES: must include openid (got "${s.oidcScopes}")`);
  }
  const issuer = new URL(s.oidcIssuer);
  if (issuer.protocol !== 'https:' && !/^(localhost|127\.[\d.]+|\[::1\])$/.test(issuer.hostname)) {
    throw new ConfigError(
      `AMBIENT_OIDC_ISSUER: must be https (plain http only on this machine; got "${s.oidcIssuer}")`,
    );
  }
  s.oidcRedirectUrl ??= oidcCallbackUrl(config.server.publicUrl);
}

/** Where the OpenID provider sends the browser back after sign-in, under the public URL. */
export function oidcCallbackUrl(publicUrl: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/api/v1/auth/oidc/callback`;
}
