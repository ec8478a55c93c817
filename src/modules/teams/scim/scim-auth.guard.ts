import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { bearerTokenOf } from '../auth/api-key.strategy';
import { ScimError } from './scim-resources';
import type { ScimToken } from './scim-token.entity';
import { ScimTokensService } from './scim-tokens.service';

export type ScimRequest = Request & { scimToken?: ScimToken };

/** The SCIM routes take only a live SCIM token of a team (`Authorization: Bearer scim_…`). */
@Injectable()
export class ScimAuthGuard implements CanActivate {
  constructor(private readonly tokens: ScimTokensService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<ScimRequest>();
    const sent = bearerTokenOf(request);
    const token = sent ? await this.tokens.authenticate(sent) : null;
    if (!token) {
      throw new ScimError(401, 'send a live SCIM token as "Authorization: Bearer <token>"');
    }
    request.scimToken = token;
    return true;
  }
}
