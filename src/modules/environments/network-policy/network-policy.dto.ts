import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsBoolean, IsOptional } from 'class-validator';
import { AMBIENT_EXTENSION } from '../../../common/openapi-extension';

const EGRESS_OPEN_ALLOWED =
  "Whether the team's environments may use `network: egress` (any outside host). When false, " +
  'saving an environment with `network: egress` is refused (400) and a run whose sandbox would ' +
  'have open egress (its environment, or the server default) fails before its sandbox opens; ' +
  '`allowlist` and `none` stay available';

/** Ambient extension: what the team's sandboxes may reach, set by its admins. */
@ApiSchema({ name: 'NetworkPolicy' })
export class NetworkPolicyDto {
  @ApiProperty({ ...AMBIENT_EXTENSION, description: EGRESS_OPEN_ALLOWED })
  egress_open_allowed: boolean;
}

/** PUT body: an omitted field stays as it is. */
@ApiSchema({ name: 'UpdateNetworkPolicyRequest' })
export class UpdateNetworkPolicyDto {
  @ApiPropertyOptional({ ...AMBIENT_EXTENSION, description: EGRESS_OPEN_ALLOWED })
  @IsOptional()
  @IsBoolean()
  egress_open_allowed?: boolean;
}
