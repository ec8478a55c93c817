import { Inject, Injectable } from '@nestjs/common';
import * as oidc from 'openid-client';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { OidcLoginAttempt } from './oidc-login-attempt.entity';
import { OidcLoginAttemptRepository } from './oidc-login-attempt.repository';

export const LOGIN_ATTEMPT_TTL_MS = 10 * 60_000;

/** Why a sign-in could not finish, said to the person on the refusal page. */
export class SignInFailure extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/** The claims of a finished sign-in: the ID token's, completed from userinfo. */
export type SignInClaims = oidc.IDToken & Record<string, unknown>;

/**
 * Ambient as an OpenID Connect relying party (openid-client): authorization code flow with PKCE
 * (S256), state and nonce. The verifier and nonce stay in MySQL (OidcLoginAttempt), so the
 * callback may reach any replica; the provider's metadata is discovered on first use and again
 * after a failure.
 */
@Injectable()
export class OidcRelyingParty {
  private discovered?: Promise<oidc.Configuration>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly attempts: OidcLoginAttemptRepository,
  ) {}

  get enabled(): boolean {
    return !!this.config.signIn.oidcIssuer;
  }

  /** The provider's authorization URL of a new sign-in, and its state (for the browser's cookie). */
  async start(returnTo: string): Promise<{ url: URL; state: string }> {
    const provider = await this.provider();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const attempt: OidcLoginAttempt = {
      state: oidc.randomState(),
      codeVerifier,
      nonce: oidc.randomNonce(),
      returnTo,
      expiresAt: new Date(Date.now() + LOGIN_ATTEMPT_TTL_MS),
    };
    await this.attempts.insertSweepingExpired(attempt);
    const url = oidc.buildAuthorizationUrl(provider, {
      redirect_uri: this.redirectUrl,
      scope: this.config.signIn.oidcScopes,
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state: attempt.state,
      nonce: attempt.nonce,
    });
    return { url, state: attempt.state };
  }

  /**
   * Finishes the sign-in the provider sent the browser back from: the state must be the one this
   * browser started (its cookie) and a live attempt, which is used up; then the code is exchanged
   * (PKCE verifier) and the ID token checked (issuer, audience, nonce, signature).
   */
  async finish(
    query: Record<string, string>,
    browserState: string | undefined,
  ): Promise<{ claims: SignInClaims; returnTo: string }> {
    const state = query.state;
    if (!state || !browserState || state !== browserState) {
      throw new SignInFailure(
        'This sign-in was not started from this browser (its state does not match). Start again.',
      );
    }
    const attempt = await this.takeAttempt(state);
    if (!attempt)
      throw new SignInFailure('This sign-in has expired or was already used. Start again.');
    const provider = await this.provider();
    const callback = new URL(this.redirectUrl);
    callback.search = new URLSearchParams(query).toString();
    try {
      const tokens = await oidc.authorizationCodeGrant(provider, callback, {
        pkceCodeVerifier: attempt.codeVerifier,
        expectedState: attempt.state,
        expectedNonce: attempt.nonce,
        idTokenExpected: true,
      });
      const idClaims = tokens.claims();
      if (!idClaims) throw new SignInFailure('The identity provider returned no ID token.');
      let claims: SignInClaims = { ...idClaims };
      const roleClaim = this.config.signIn.oidcRoleClaim;
      if (!(roleClaim in claims) && provider.serverMetadata().userinfo_endpoint) {
        const info = await oidc.fetchUserInfo(provider, tokens.access_token, idClaims.sub);
        claims = { ...info, ...idClaims };
      }
      return { claims, returnTo: attempt.returnTo };
    } catch (err) {
      if (err instanceof SignInFailure) throw err;
      if (err instanceof oidc.AuthorizationResponseError) {
        throw new SignInFailure(
          `The identity provider refused the sign-in: ${err.error}${err.error_description ? ` (${err.error_description})` : ''}.`,
          403,
        );
      }
      throw new SignInFailure(`The sign-in could not be completed: ${(err as Error).message}`);
    }
  }

  private get redirectUrl(): string {
    const url = this.config.signIn.oidcRedirectUrl;
    if (!url) throw new Error('AMBIENT_OIDC_REDIRECT_URL is unset while SSO is on');
    return url;
  }

  private async takeAttempt(state: string): Promise<OidcLoginAttempt | null> {
    if (state.length > 64) return null;
    const attempt = await this.attempts.byState(state);
    if (!attempt) return null;
    // Whoever deletes the row owns the attempt: a replayed callback finds nothing to delete.
    const deleted = await this.attempts.delete(state);
    if (!deleted || attempt.expiresAt.getTime() <= Date.now()) return null;
    return attempt;
  }

  private provider(): Promise<oidc.Configuration> {
    this.discovered ??= this.discover().catch((err: unknown) => {
      this.discovered = undefined;
      throw new SignInFailure(
        `The identity provider ${this.config.signIn.oidcIssuer} could not be reached: ${(err as Error).message}`,
        503,
      );
    });
    return this.discovered;
  }

  private discover(): Promise<oidc.Configuration> {
    const { oidcIssuer, oidcClientId, oidcClientSecret } = this.config.signIn;
    if (!oidcIssuer || !oidcClientId) throw new Error('single sign-on is not configured');
    const issuer = new URL(oidcIssuer);
    return oidc.discovery(
      issuer,
      oidcClientId,
      oidcClientSecret,
      oidcClientSecret ? oidc.ClientSecretPost(oidcClientSecret) : oidc.None(),
      // Plain http only for a provider on this machine (loadConfig refuses it elsewhere).
      issuer.protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : undefined,
    );
  }
}
