import { Global, Module } from '@nestjs/common';
import { Invalidations } from '../cache/invalidations';
import { REDIS, RedisConnections } from './redis-connections';

export { REDIS, RedisConnections } from './redis-connections';

@Global()
@Module({
  providers: [
    RedisConnections,
    Invalidations,
    {
      provide: REDIS,
      inject: [RedisConnections],
      useFactory: (connections: RedisConnections) => connections.create(),
    },
  ],
  exports: [RedisConnections, REDIS, Invalidations],
})
export class RedisModule {}
