import { ApiError } from '../../../common/errors/api-error';
import type { Factory } from './entities/factory.entity';

/** Opaque keyset cursor over (created_at, id), newest first. */
export function encodeFactoryCursor(factory: Factory): string {
  return Buffer.from(JSON.stringify([factory.createdAt.toISOString(), factory.id])).toString(
    'base64url',
  );
}

export function decodeFactoryCursor(cursor: string): { createdAt: Date; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [
      string,
      string,
    ];
    const createdAt = new Date(at);
    if (typeof id !== 'string' || Number.isNaN(createdAt.getTime())) throw new Error('bad cursor');
    return { createdAt, id };
  } catch {
    throw ApiError.invalid('cursor', 'is not a cursor this endpoint returned');
  }
}
