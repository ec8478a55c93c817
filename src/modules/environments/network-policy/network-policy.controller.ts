import { Body, Controller, Get, Put } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../../../common/auth/principal.decorator';
import type { Principal } from '../../../common/auth/principal';
import { RequirePermission } from '../../../common/auth/require-permission.decorator';
import { ApiProblems } from '../../../common/errors/problem.schema';
import { NetworkPolicyDto, UpdateNetworkPolicyDto } from './network-policy.dto';
import { NetworkPolicyService } from './network-policy.service';

/** Ambient extension: what the team's sandboxes may reach, beyond each environment's setting. */
@ApiTags('environments')
@ApiBearerAuth()
@Controller('network-policy')
export class NetworkPolicyController {
  constructor(private readonly policies: NetworkPolicyService) {}

  @Get()
  @RequirePermission('network.read')
  @ApiOperation({ operationId: 'getNetworkPolicy', summary: "The team's network policy" })
  @ApiProblems(401, 403)
  @ApiOkResponse({ type: NetworkPolicyDto })
  get(@CurrentPrincipal() principal: Principal): Promise<NetworkPolicyDto> {
    return this.policies.get(principal.teamId);
  }

  @Put()
  @RequirePermission('network.write')
  @ApiOperation({
    operationId: 'updateNetworkPolicy',
    summary: "Set the team's network policy (omitted = unchanged)",
  })
  @ApiProblems(400, 401, 403)
  @ApiOkResponse({ type: NetworkPolicyDto })
  update(
    @CurrentPrincipal() principal: Principal,
    @Body() body: UpdateNetworkPolicyDto,
  ): Promise<NetworkPolicyDto> {
    return this.policies.update(principal, body);
  }
}
