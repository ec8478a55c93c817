import {
  Body,
  Controller,
  Delete,
  Get,
  Header,
  HttpCode,
  Inject,
  Param,
  Patch,
  Post,
  Put,
  Query,
  Req,
  UseFilters,
  UseGuards,
} from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '../../../common/auth/public.decorator';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import { ScimAuthGuard, type ScimRequest } from './scim-auth.guard';
import { ScimErrorFilter } from './scim-error.filter';
import {
  activeOfPatch,
  activeOfPut,
  pageOf,
  SCIM_CONTENT_TYPE,
  SCIM_LIST_SCHEMA,
  ScimError,
  serviceProviderConfig,
  toScimUser,
  userNameOfFilter,
} from './scim-resources';
import type { ScimToken } from './scim-token.entity';
import { ScimUsersService } from './scim-users.service';

/** Where the SCIM service is, under the API prefix. */
export const SCIM_PATH = 'scim/v2';

/**
 * SCIM 2.0 Users (RFC 7643/7644), the subset identity providers use to deprovision: find a person
 * (`filter=userName eq "…"`), read one, and deactivate (PATCH or PUT `active: false`, or DELETE).
 * People are created at their first sign-in, not here. Authenticated by a team's SCIM token
 * instead of an API key; answers and errors are `application/scim+json`. Kept out of the OpenAPI
 * document (it is SCIM's protocol, not Ambient's API).
 */
@ApiExcludeController()
@Public()
@UseGuards(ScimAuthGuard)
@UseFilters(ScimErrorFilter)
@Controller(SCIM_PATH)
export class ScimUsersController {
  private readonly baseUrl: string;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly users: ScimUsersService,
  ) {
    this.baseUrl = `${config.server.publicUrl.replace(/\/+$/, '')}/api/v1/${SCIM_PATH}`;
  }

  /** What this service supports (RFC 7643 §5), for providers that ask before provisioning. */
  @Get('ServiceProviderConfig')
  @Header('Content-Type', SCIM_CONTENT_TYPE)
  serviceProviderConfig() {
    return serviceProviderConfig(this.baseUrl);
  }

  @Get('Users')
  @Header('Content-Type', SCIM_CONTENT_TYPE)
  async list(
    @Req() req: ScimRequest,
    @Query('filter') filter: unknown,
    @Query('startIndex') startIndex: unknown,
    @Query('count') count: unknown,
  ) {
    const page = pageOf(startIndex, count);
    const found = await this.users.list(tokenOf(req).teamId, userNameOfFilter(filter), page);
    return {
      schemas: [SCIM_LIST_SCHEMA],
      totalResults: found.total,
      startIndex: page.start,
      itemsPerPage: found.users.length,
      Resources: found.users.map((user) => toScimUser(user, this.baseUrl)),
    };
  }

  @Get('Users/:id')
  @Header('Content-Type', SCIM_CONTENT_TYPE)
  async get(@Req() req: ScimRequest, @Param('id') id: string) {
    return toScimUser(await this.users.get(tokenOf(req).teamId, id), this.baseUrl);
  }

  @Post('Users')
  create(): never {
    throw new ScimError(
      501,
      'people are created at their first sign-in through single sign-on; SCIM here deactivates and reactivates them',
    );
  }

  @Patch('Users/:id')
  @Header('Content-Type', SCIM_CONTENT_TYPE)
  async patch(@Req() req: ScimRequest, @Param('id') id: string, @Body() body: unknown) {
    return this.applied(tokenOf(req), id, activeOfPatch(body));
  }

  @Put('Users/:id')
  @Header('Content-Type', SCIM_CONTENT_TYPE)
  async put(@Req() req: ScimRequest, @Param('id') id: string, @Body() body: unknown) {
    return this.applied(tokenOf(req), id, activeOfPut(body));
  }

  @Delete('Users/:id')
  @HttpCode(204)
  async remove(@Req() req: ScimRequest, @Param('id') id: string): Promise<void> {
    await this.users.setActive(tokenOf(req), id, false);
  }

  private async applied(token: ScimToken, id: string, active: boolean | undefined) {
    const user =
      active === undefined
        ? await this.users.get(token.teamId, id)
        : await this.users.setActive(token, id, active);
    return toScimUser(user, this.baseUrl);
  }
}

function tokenOf(req: ScimRequest): ScimToken {
  // ScimAuthGuard ran first: a request without a token never gets here.
  return req.scimToken!;
}
