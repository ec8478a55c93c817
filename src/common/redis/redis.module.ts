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
      // Commands issued in the same tick (change hints of many runs, signals, presence) go out
      // in one write. Nothing blocking runs on this connection; subscribers have their own.
      useFactory: (connections: RedisConnections) =>
        connections.create({ enableAutoPipelining: true }),
    },
  ],
  exports: [RedisConnections, REDIS, Invalidations],
})
export class RedisModule {}
