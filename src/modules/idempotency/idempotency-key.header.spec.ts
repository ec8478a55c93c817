import { ApiError } from '../../common/errors/api-error';
import { parseIdempotencyKey, requestDigest } from './idempotency-key.header';

describe('parseIdempotencyKey', () => {
  it('reads a bare key and the quoted form of the IETF draft as the same key', () => {
    expect(parseIdempotencyKey('8e03978e-40d5-43e8-bc93-6894a57f9324')).toBe(
      '8e03978e-40d5-43e8-bc93-6894a57f9324',
    );
    expect(parseIdempotencyKey('"8e03978e-40d5"')).toBe('8e03978e-40d5');
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
  });

  it.each([
    ['empty', ''],
    ['blank', '  '],
    ['empty quoted', '""'],
    ['256 characters', 'k'.repeat(256)],
    ['not ASCII', 'clé'],
    ['a control character', 'a\u0001b'],
  ])('refuses a key that is %s with 400 naming the header', (_what, raw) => {
    let error: unknown;
    try {
      parseIdempotencyKey(raw);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    expect((error as ApiError).detail).toMatch(/^Idempotency-Key: /);
  });

  it('accepts 255 characters', () => {
    expect(parseIdempotencyKey('k'.repeat(255))).toHaveLength(255);
  });
});

describe('requestDigest', () => {
  it('differs when the method, the path or the body differ, and only then', () => {
    const base = requestDigest('POST', '/api/v1/agent/runs', { prompt: 'a' });
    expect(requestDigest('post', '/api/v1/agent/runs', { prompt: 'a' })).toBe(base);
    expect(base).toMatch(/^[0-9a-f]{64}$/);
    for (const other of [
      requestDigest('PUT', '/api/v1/agent/runs', { prompt: 'a' }),
      requestDigest('POST', '/api/v1/agent/run', { prompt: 'a' }),
      requestDigest('POST', '/api/v1/agent/runs', { prompt: 'b' }),
      requestDigest('POST', '/api/v1/agent/runs', undefined),
    ]) {
      expect(other).not.toBe(base);
    }
  });
});
