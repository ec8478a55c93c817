import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

/** A cursor page's position (the run list, the audit log): Oz's `PageInfo`. */
@ApiSchema({ name: 'PageInfo' })
export class PageInfoDto {
  @ApiProperty() has_next_page: boolean;
  @ApiPropertyOptional() next_cursor?: string;
}
