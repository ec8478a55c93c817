import { Controller, Get, Res } from '@nestjs/common';
import type { Response } from 'express';
import { send } from '../modules/health/health.controller';
import { Readiness } from '../modules/health/readiness.service';

/** The api's probe paths on the ingress port too, so an ingress-only pod is probed the same way. */
@Controller('api/v1/health')
export class IngressHealthController {
  constructor(private readonly readiness: Readiness) {}

  @Get('live')
  async live(@Res({ passthrough: true }) res: Response) {
    return send(res, await this.readiness.live());
  }

  @Get('ready')
  async ready(@Res({ passthrough: true }) res: Response) {
    return send(res, await this.readiness.ready());
  }
}
