import { All, Controller, Get, Param, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { IngressService } from './ingress.service';

/** `POST /webhooks/w/<uid>` (token, signature) and `POST /webhooks/w/<uid>/<token>` (url_token). */
@Controller()
export class IngressController {
  constructor(private readonly ingress: IngressService) {}

  @All('webhooks/w/:uid')
  deliver(@Req() req: Request, @Res() res: Response, @Param('uid') uid: string) {
    return this.ingress.handle(req, res, uid);
  }

  @All('webhooks/w/:uid/:token')
  deliverWithToken(
    @Req() req: Request,
    @Res() res: Response,
    @Param('uid') uid: string,
    @Param('token') token: string,
  ) {
    return this.ingress.handle(req, res, uid, token);
  }

  @Get('health')
  health() {
    return { status: 'ok' };
  }
}
