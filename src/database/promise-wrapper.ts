import * as mysql2 from 'mysql2';
import * as mysql2Promise from 'mysql2/promise';

type WrapperClass = new (connection: unknown, promiseImpl?: unknown) => unknown;
type WithPromise = { prototype: { promise(promiseImpl?: unknown): unknown } };

/**
 * mysql2's `PoolConnection#promise()` `require`s its promise wrapper's file on every call, and
 * TypeORM calls it for every statement. Node resolves such a `require` afresh each time (its fast
 * path only knows a module the calling file loaded first, and mysql2's `promise.js` loads it
 * first), which a burst's profile put at half a millisecond of the event loop per run. The same
 * wrapper is made here from the class mysql2 exports; idempotent, process-wide.
 */
export function makePromiseWrappersWithoutRequire(): void {
  const poolConnection = (mysql2 as unknown as { PoolConnection: WithPromise }).PoolConnection;
  const wrapper = (mysql2Promise as unknown as { PromisePoolConnection: WrapperClass })
    .PromisePoolConnection;
  poolConnection.prototype.promise = function promise(this: unknown, promiseImpl?: unknown) {
    return new wrapper(this, promiseImpl);
  };
}
