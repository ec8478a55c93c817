import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RunsModule } from '../runs';
import { SecretsModule } from '../secrets';
import { NotificationDelivery } from './entities/notification-delivery.entity';
import { NotificationEndpoint } from './entities/notification-endpoint.entity';
import { NotificationDeliverer } from './notification-deliverer.service';
import { NotificationEmitter } from './notification-emitter.service';
import { NotificationEndpointsController } from './notification-endpoints.controller';
import { NotificationEndpoints } from './notification-endpoints.service';
import { NotificationQueue, NOTIFICATIONS_QUEUE } from './notification-queue';
import { NotificationDeliveryRepository } from './notification-delivery.repository';
import { NotificationEndpointRepository } from './notification-endpoint.repository';
import { NotificationSweeper } from './notification-sweeper.service';
import { RunEndNotifications } from './run-end-notifications';
import { TeamEndpoints } from './team-endpoints';

/**
 * Every role: the emitter (run ends are emitted wherever they happen) and the delivery queue;
 * the deliverer's `@QueueProcessor` registers only with the worker role.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([NotificationEndpoint, NotificationDelivery]),
    BullModule.registerQueue({ name: NOTIFICATIONS_QUEUE }),
    RunsModule,
    SecretsModule,
  ],
  providers: [
    NotificationQueue,
    NotificationEmitter,
    RunEndNotifications,
    NotificationDeliverer,
    NotificationEndpointRepository,
    NotificationDeliveryRepository,
    TeamEndpoints,
  ],
  exports: [
    NotificationQueue,
    NotificationEmitter,
    RunEndNotifications,
    NotificationEndpointRepository,
    NotificationDeliveryRepository,
    TeamEndpoints,
  ],
})
export class NotificationsModule {}

/** The admin API of notification endpoints and their delivery logs. */
@Module({
  imports: [NotificationsModule, SecretsModule],
  controllers: [NotificationEndpointsController],
  providers: [NotificationEndpoints],
})
export class NotificationsApiModule {}

/** The worker role's sweep of deliveries whose job was lost. */
@Module({
  imports: [NotificationsModule],
  providers: [NotificationSweeper],
})
export class NotificationsWorkerModule {}
