import { loadConfig } from './app-config';
import { settlePublicUrls } from './public-urls';

const base = { AMBIENT_CONFIG_FILE: 'config/default.yaml' };
const sso = {
  ...base,
  AMBIENT_OIDC_ISSUER: 'https://sso.example.com/realms/main',
  AMBIENT_OIDC_CLIENT_ID: 'ambient',
  AMBIENT_OIDC_ROLE_MAPPING: 'ambient-acme=acme:member',
};

describe('single sign-on settings', () => {
  it('are off by default, with the documented defaults', () => {
    const { signIn } = loadConfig(base);
    expect(signIn.oidcIssuer).toBeUndefined();
    expect(signIn).toMatchObject({
      oidcScopes: 'openid email profile',
      oidcRoleClaim: 'groups',
      sessionTtlHours: 12,
    });
  });

  it("derive the redirect URL from the public URL, following the listener's bound port", () => {
    expect(
      loadConfig({ ...sso, AMBIENT_PUBLIC_URL: 'https://ambient.example.com/' }).signIn
        .oidcRedirectUrl,
    ).toBe('https://ambient.example.com/api/v1/auth/oidc/callback');
    const config = loadConfig({ ...sso, AMBIENT_HOST: '127.0.0.1', AMBIENT_PORT: '0' });
    settlePublicUrls(config, { api: 43210 });
    expect(config.signIn.oidcRedirectUrl).toBe('http://127.0.0.1:43210/api/v1/auth/oidc/callback');
    const fixed = loadConfig({ ...sso, AMBIENT_OIDC_REDIRECT_URL: 'https://proxy.example/cb' });
    settlePublicUrls(fixed, { api: 43210 });
    expect(fixed.signIn.oidcRedirectUrl).toBe('https://proxy.example/cb');
  });

  it('stop start-up on a half or wrong configuration, naming the variable', () => {
    const { AMBIENT_OIDC_CLIENT_ID: _id, ...noClient } = sso;
    expect(() => loadConfig(noClient)).toThrow(/^AMBIENT_OIDC_CLIENT_ID: missing/);
    const { AMBIENT_OIDC_ROLE_MAPPING: _m, ...noMapping } = sso;
    expect(() => loadConfig(noMapping)).toThrow(/^AMBIENT_OIDC_ROLE_MAPPING: missing/);
    expect(() => loadConfig({ ...sso, AMBIENT_OIDC_ROLE_MAPPING: 'g=acme:owner' })).toThrow(
      /^AMBIENT_OIDC_ROLE_MAPPING: entry "g=acme:owner": role must be one of/,
    );
    expect(() => loadConfig({ ...sso, AMBIENT_OIDC_SCOPES: 'email profile' })).toThrow(
      /^AMBIENT_OIDC_SCOPES: must include openid/,
    );
    expect(() => loadConfig({ ...sso, AMBIENT_OIDC_ISSUER: 'http://sso.example.com' })).toThrow(
      /^AMBIENT_OIDC_ISSUER: must be https/,
    );
    expect(
      loadConfig({ ...sso, AMBIENT_OIDC_ISSUER: 'http://127.0.0.1:9999' }).signIn.oidcIssuer,
    ).toBe('http://127.0.0.1:9999');
    expect(() => loadConfig({ ...base, AMBIENT_OIDC_CLIENT_ID: 'ambient' })).toThrow(
      /^AMBIENT_OIDC_CLIENT_ID: set only beside AMBIENT_OIDC_ISSUER/,
    );
  });
});
