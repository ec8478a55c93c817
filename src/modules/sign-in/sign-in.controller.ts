import { Controller, Get, HttpCode, Inject, Post, Query, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { Public } from '../../common/auth/public.decorator';
import { ApiError } from '../../common/errors/api-error';
import {
  changesState,
  cookieOptions,
  cookiesOf,
  CSRF_COOKIE,
  CSRF_HEADER,
  KeyRevocationWatch,
  SESSION_COOKIE,
  sameToken,
  UserSessionsService,
} from '../teams';
import {
  LOGIN_ATTEMPT_TTL_MS,
  OidcRelyingParty,
  SignInFailure,
} from './oidc-relying-party.service';
import { SIGN_IN_PAGE_HEADERS, signInRefusedPage } from './sign-in-page';
import { SignInService } from './sign-in.service';

/** Binds a sign-in to the browser that started it (checked against `state` on the way back). */
const STATE_COOKIE = 'ambient_oidc_state';
const STATE_COOKIE_PATH = '/api/v1/auth/oidc';
const CONSOLE_HOME = '/console/';

/** Only a console page is a place to return to: never another site (no open redirect). */
export function consoleReturnPath(value: unknown): string {
  if (typeof value !== 'string' || value.length > 512) return CONSOLE_HOME;
  return /^\/console(\/[^\\]*)?$/.test(value) && !value.startsWith('//') ? value : CONSOLE_HOME;
}

/**
 * The console's single sign-on over OpenID Connect, for browsers (kept out of the OpenAPI
 * document): `login` sends the browser to the provider, `callback` signs it in with a session
 * cookie, `logout` ends the session. `config` tells the console whether SSO is on.
 */
@ApiExcludeController()
@Controller('auth')
export class SignInController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly relyingParty: OidcRelyingParty,
    private readonly signIns: SignInService,
    private readonly sessions: UserSessionsService,
    private readonly streams: KeyRevocationWatch,
  ) {}

  @Public()
  @Get('oidc/config')
  oidcConfig(): { enabled: boolean; login_url: string | null } {
    const enabled = this.relyingParty.enabled;
    return { enabled, login_url: enabled ? '/api/v1/auth/oidc/login' : null };
  }

  @Public()
  @Get('oidc/login')
  async login(@Query('return_to') returnTo: unknown, @Res() res: Response): Promise<void> {
    if (!this.relyingParty.enabled) {
      throw new ApiError(
        'resource_not_found',
        'single sign-on is not configured (AMBIENT_OIDC_ISSUER)',
      );
    }
    try {
      const { url, state } = await this.relyingParty.start(consoleReturnPath(returnTo));
      res.cookie(STATE_COOKIE, state, this.cookie(true, LOGIN_ATTEMPT_TTL_MS, STATE_COOKIE_PATH));
      res.redirect(302, url.href);
    } catch (err) {
      if (!(err instanceof SignInFailure)) throw err;
      res.status(err.status).set(SIGN_IN_PAGE_HEADERS).send(signInRefusedPage(err.message));
    }
  }

  @Public()
  @Get('oidc/callback')
  async callback(@Req() req: Request, @Res() res: Response): Promise<void> {
    res.clearCookie(STATE_COOKIE, this.cookie(true, undefined, STATE_COOKIE_PATH));
    if (!this.relyingParty.enabled) {
      throw new ApiError(
        'resource_not_found',
        'single sign-on is not configured (AMBIENT_OIDC_ISSUER)',
      );
    }
    try {
      const query = Object.fromEntries(
        Object.entries(req.query).filter((e): e is [string, string] => typeof e[1] === 'string'),
      );
      const { claims, returnTo } = await this.relyingParty.finish(
        query,
        cookiesOf(req.headers).get(STATE_COOKIE),
      );
      const { session } = await this.signIns.signIn(claims);
      const maxAge = session.expiresAt.getTime() - Date.now();
      res.cookie(SESSION_COOKIE, session.token, this.cookie(true, maxAge));
      res.cookie(CSRF_COOKIE, session.csrfToken, this.cookie(false, maxAge));
      res.redirect(302, returnTo);
    } catch (err) {
      if (!(err instanceof SignInFailure)) throw err;
      res.status(err.status).set(SIGN_IN_PAGE_HEADERS).send(signInRefusedPage(err.message));
    }
  }

  /**
   * Ends the browser's session on every replica (its row is deleted), and the run streams it
   * opened, and clears its cookies. With
   * a live session the CSRF token is required, so another site cannot sign the user out.
   */
  @Public()
  @Post('logout')
  @HttpCode(204)
  async logout(@Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<void> {
    const token = cookiesOf(req.headers).get(SESSION_COOKIE);
    const session = token ? await this.sessions.principalOf(token) : null;
    if (token && session) {
      const sent = req.headers[CSRF_HEADER];
      if (
        changesState(req.method) &&
        !sameToken(typeof sent === 'string' ? sent : undefined, session.csrfToken)
      ) {
        throw new ApiError(
          'not_authorized',
          `signing out needs the session's CSRF token as "${CSRF_HEADER}"`,
        );
      }
      if (await this.sessions.end(token)) {
        await this.signIns.signedOut(session.principal);
        // The session's streams on this replica end now; other replicas' at their next check.
        await this.streams.checkNow();
      }
    }
    res.clearCookie(SESSION_COOKIE, this.cookie(true));
    res.clearCookie(CSRF_COOKIE, this.cookie(false));
  }

  private cookie(httpOnly: boolean, maxAgeMs?: number, path?: string) {
    return cookieOptions(this.config.server.publicUrl, { httpOnly, maxAgeMs, path });
  }
}
