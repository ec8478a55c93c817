import { Body, Controller, HttpCode, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { PrototypedExpressAdapter } from '../src/bootstrap/prototyped-express-adapter';

/**
 * The baseline of the creation figure: Nest on Express (on the HTTP server Ambient's own
 * applications use), JSON body in, JSON out, nothing else.
 */
@Controller()
class BareController {
  @Post('runs')
  @HttpCode(200)
  create(@Body() body: { prompt?: string }): Record<string, unknown> {
    const id = randomUUID();
    return { run_id: id, task_id: id, state: 'QUEUED', at_capacity: false, echo: !!body.prompt };
  }
}

/** The baseline of the ingress figure (`bench:ingress`): a JSON body in, 202 out. */
@Controller()
class BareDeliveryController {
  @Post('deliveries')
  @HttpCode(202)
  deliver(@Body() body: unknown): Record<string, unknown> {
    return { delivery_id: randomUUID(), echo: body !== undefined };
  }
}

@Module({ controllers: [BareController, BareDeliveryController] })
class BareModule {}

export interface BareApp {
  url: string;
  close(): Promise<void>;
}

/** `configure` runs before listen (bench:observability puts Ambient's HTTP observability on it). */
export async function startBareApp(
  configure?: (app: NestExpressApplication) => void,
): Promise<BareApp> {
  const app = await NestFactory.create<NestExpressApplication>(
    BareModule,
    new PrototypedExpressAdapter(),
    { logger: false },
  );
  configure?.(app);
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/runs`, close: () => app.close() };
}
