import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express } from 'express';

/**
 * Nest's Express adapter, except that its HTTP server builds each request and response on
 * Express's own prototypes (`app.request`, `app.response`). Express otherwise moves every request
 * and response onto them as it arrives (`Object.setPrototypeOf`), and V8 then keeps the whole
 * request's object graph through the young generation's collections: at 500 requests/s a bare
 * Express app kept ~3 MB per scavenge and paused ~11 ms each, against ~30 KB and ~2.4 ms this way
 * (docs/PERFORMANCE.md). Express finds the prototype already in place and changes nothing.
 *
 * HTTPS, `forceCloseConnections` and `return503OnClosing` (which Ambient does not use) get Nest's
 * own server, as does a Node whose IncomingMessage or ServerResponse is a class.
 */
export class PrototypedExpressAdapter extends ExpressAdapter {
  override initHttpServer(options: NestApplicationOptions): void {
    const app = this.getInstance<Express>();
    const Request = constructingWith(IncomingMessage, app.request);
    const Response = constructingWith<typeof ServerResponse>(ServerResponse, app.response);
    const nestOnly =
      options.httpsOptions || options.forceCloseConnections || options.return503OnClosing;
    if (nestOnly || !Request || !Response) return super.initHttpServer(options);
    this.httpServer = createServer({ IncomingMessage: Request, ServerResponse: Response }, app);
  }
}

/**
 * A constructor running `base`'s body on an object built on `prototype` (which extends base's), or
 * null when `base` is a class, which cannot be run so. Not `Reflect.construct(base, args, …)`:
 * objects built that way kept the young generation as busy as re-prototyping did (measured).
 */
function constructingWith<T extends new (...args: never[]) => object>(
  base: T,
  prototype: object,
): T | null {
  if (/^class\b/.test(Function.prototype.toString.call(base))) return null;
  const body = base as unknown as (this: object, ...args: unknown[]) => void;
  function Constructor(this: object, ...args: unknown[]): void {
    body.apply(this, args);
  }
  Constructor.prototype = prototype;
  return Constructor as unknown as T;
}
