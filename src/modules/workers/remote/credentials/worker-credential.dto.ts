import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { toRfc3339 } from '../../../../common/time';
import type { WorkerCredential } from './worker-credential.entity';

@ApiSchema({ name: 'CreateWorkerCredentialRequest', description: 'A new worker credential' })
export class CreateWorkerCredentialDto {
  @ApiProperty({ description: 'A label to recognise the credential by', maxLength: 128 })
  @IsString()
  @MinLength(1)
  @MaxLength(128)
  @Matches(/\S/, { message: 'must not be blank' })
  name: string;

  @ApiProperty({
    description:
      'The worker id it registers (as in `--worker-id` and `config.worker_host`), or a pool: ' +
      'a prefix followed by `*` (e.g. `ci-*`)',
    example: 'build-box-1',
    maxLength: 129,
  })
  @IsString()
  @MaxLength(129)
  worker_id: string;
}

@ApiSchema({
  name: 'WorkerCredential',
  description: 'A self-hosted worker credential; its secret is never returned',
})
export class WorkerCredentialDto {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'The worker id it registers, or `<prefix>*` for a pool' })
  worker_id: string;
  @ApiProperty({ description: 'Public lookup prefix of the credential (never the secret)' })
  prefix: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) last_used_at: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) revoked_at: string | null;
}

@ApiSchema({ name: 'CreatedWorkerCredential' })
export class CreatedWorkerCredentialDto extends WorkerCredentialDto {
  @ApiProperty({
    description: 'The credential itself (`--worker-credential`); shown only in this response',
  })
  credential: string;
}

@ApiSchema({ name: 'ListWorkerCredentialsResponse' })
export class ListWorkerCredentialsResponseDto {
  @ApiProperty({ type: [WorkerCredentialDto] }) worker_credentials: WorkerCredentialDto[];
}

export function toWorkerCredentialDto(record: WorkerCredential): WorkerCredentialDto {
  return {
    id: record.id,
    name: record.name,
    worker_id: record.workerId,
    prefix: record.prefix,
    created_at: record.createdAt.toISOString(),
    last_used_at: toRfc3339(record.lastUsedAt),
    revoked_at: toRfc3339(record.revokedAt),
  };
}
