import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditEvent } from './audit-event.entity';
import { AuditEventsController } from './audit-events.controller';
import { AuditEventsQuery } from './audit-events.repository';
import { AuditLog } from './audit-log.service';
import { AuditRetentionRepository } from './audit-retention.repository';
import { AuditRetentionSweeper } from './audit-retention.sweeper';

/** The audit log's writer, for every module that makes changes (every role). */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([AuditEvent])],
  providers: [AuditLog],
  exports: [AuditLog],
})
export class AuditModule {}

/** The api role's part: GET /audit-events and the retention sweep. */
@Module({
  controllers: [AuditEventsController],
  providers: [AuditEventsQuery, AuditRetentionSweeper, AuditRetentionRepository],
})
export class AuditApiModule {}
