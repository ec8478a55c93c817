import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

@ApiSchema({ name: 'HandoffAttachment' })
export class HandoffAttachmentDto {
  @ApiProperty() attachment_id: string;
  @ApiProperty({ format: 'uri', description: 'A signed, time-limited download URL' })
  download_url: string;
  @ApiProperty() filename: string;
  @ApiPropertyOptional() mime_type?: string;
}

@ApiSchema({ name: 'ListHandoffAttachmentsResponse' })
export class ListHandoffAttachmentsResponseDto {
  @ApiProperty({ type: [HandoffAttachmentDto] }) attachments: HandoffAttachmentDto[];
}
