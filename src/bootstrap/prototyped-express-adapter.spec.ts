import { Controller, Get, Module, Post, Req, Res } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Express, Request, Response } from 'express';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PrototypedExpressAdapter } from './prototyped-express-adapter';

/** The prototypes of the last request and response as Node's server built them, before Express. */
let built: { request: object; response: object } | null = null;

@Controller()
class EchoController {
  @Post('echo')
  echo(@Req() req: Request, @Res() res: Response): void {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      res.status(201).json({ body, type: req.get('content-type'), q: req.query.q, ip: req.ip });
    });
  }

  @Get('plain')
  plain(): { ok: boolean } {
    return { ok: true };
  }
}

@Module({ controllers: [EchoController] })
class EchoModule {}

describe('PrototypedExpressAdapter', () => {
  let app: NestExpressApplication;
  let base: string;

  beforeAll(async () => {
    app = await NestFactory.create<NestExpressApplication>(
      EchoModule,
      new PrototypedExpressAdapter(),
      { logger: false, bodyParser: false },
    );
    const server = app.getHttpServer() as Server;
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
      built = {
        request: Object.getPrototypeOf(req) as object,
        response: Object.getPrototypeOf(res) as object,
      };
    });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(() => app.close());

  it("hands Express requests and responses already built on its prototypes, with Express's helpers working", async () => {
    const answer = await fetch(`${base}/echo?q=1`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'hello',
    });
    expect(answer.status).toBe(201);
    expect(await answer.json()).toEqual({
      body: 'hello',
      type: 'text/plain',
      q: '1',
      ip: '127.0.0.1',
    });
    const express = app.getHttpAdapter().getInstance() as Express;
    expect(built?.request).toBe(express.request);
    expect(built?.response).toBe(express.response);
  });

  it('serves Nest routes as usual', async () => {
    const answer = await fetch(`${base}/plain`);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ ok: true });
  });
});
