import pino from 'pino';
import { Writable } from 'node:stream';
import { loggedPath } from './http-logging';
import { withLogBindings } from './log-bindings';
import { PinoNestLogger } from './nest-logger';
import { withRequestContext } from '../request-context';

function capture(level = 'info') {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const logger = new PinoNestLogger(pino({ level }, stream));
  return { logger, lines };
}

describe('PinoNestLogger', () => {
  it('writes the context and the bindings of the current request and run on every line', async () => {
    const { logger, lines } = capture();
    await withLogBindings({ request_id: 'req-1' }, async () => {
      await Promise.resolve();
      logger.log('creating', 'Runs');
      await withLogBindings({ run_id: 'run-9' }, async () => {
        logger.warn('slow sandbox', 'Sandbox');
      });
    });
    logger.log('outside', 'Ambient');
    expect(lines).toEqual([
      expect.objectContaining({ msg: 'creating', context: 'Runs', request_id: 'req-1' }),
      expect.objectContaining({
        msg: 'slow sandbox',
        context: 'Sandbox',
        request_id: 'req-1',
        run_id: 'run-9',
      }),
      expect.objectContaining({ msg: 'outside', context: 'Ambient' }),
    ]);
    expect(lines[2]).not.toHaveProperty('request_id');
  });

  it("writes the id of the HTTP request being served, kept under the request's own bindings", async () => {
    const { logger, lines } = capture();
    await withRequestContext({ requestId: 'req-2', ip: null }, async () => {
      await Promise.resolve();
      logger.log('validated', 'Runs');
      await withLogBindings({ run_id: 'run-3' }, async () => logger.log('queued', 'Runs'));
    });
    expect(lines).toEqual([
      expect.objectContaining({ msg: 'validated', request_id: 'req-2' }),
      expect.objectContaining({ msg: 'queued', request_id: 'req-2', run_id: 'run-3' }),
    ]);
  });

  it("keeps Nest's per-module start-up lines at debug", () => {
    const { logger, lines } = capture();
    logger.log('TeamsModule dependencies initialized', 'InstanceLoader');
    logger.log('Mapped {/api/v1/agent/runs, POST} route', 'RouterExplorer');
    logger.log('processing runs', 'RunWorker');
    expect(lines.map((l) => l.msg)).toEqual(['processing runs']);
  });

  it('takes an object as fields (msg as the message) and an error with its stack', () => {
    const { logger, lines } = capture();
    logger.log({ msg: 'started', startup: { roles: ['api'] } }, 'Ambient');
    logger.error('boom', 'Error: boom\n    at somewhere (x.ts:1:1)', 'ExceptionsHandler');
    expect(lines[0]).toMatchObject({ msg: 'started', startup: { roles: ['api'] } });
    expect(lines[1]).toMatchObject({ msg: 'boom', context: 'ExceptionsHandler' });
    expect(String(lines[1].stack)).toContain('at somewhere');
  });
});

describe('loggedPath', () => {
  it('drops the query string and a webhook url token', () => {
    expect(loggedPath('/api/v1/blobs/x?expires=1&signature=abc')).toBe('/api/v1/blobs/x');
    expect(loggedPath('/webhooks/w/wh_123/s3cr3t-token')).toBe('/webhooks/w/wh_123/[token]');
    expect(loggedPath('/webhooks/w/wh_123')).toBe('/webhooks/w/wh_123');
  });

  it('drops an environment share token', () => {
    expect(loggedPath('/api/v1/agent/environments/shared/sh4re-t0ken/accept?x=1')).toBe(
      '/api/v1/agent/environments/shared/[token]/accept',
    );
    expect(loggedPath('/api/v1/agent/environments/env_1/share-link')).toBe(
      '/api/v1/agent/environments/env_1/share-link',
    );
  });

  it('drops an API key in any segment', () => {
    expect(loggedPath('/api/v1/api-keys/amb_abcdefghijkl_0123456789abcdef0123456789abcdef')).toBe(
      '/api/v1/api-keys/[key]',
    );
    expect(loggedPath('/api/v1/agent/runs/amb_x/stream')).toBe('/api/v1/agent/runs/[key]/stream');
    expect(loggedPath('/api/v1/agent/runs/not_amb_x')).toBe('/api/v1/agent/runs/not_amb_x');
  });
});
