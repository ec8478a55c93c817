import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from './api-error';

/** A lone UTF-16 surrogate: a string JSON can carry (`"\ud800"`) but no UTF-8 text can hold. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** What identifiers (ids, uids, secret names) are made of. */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
export const INVALID_UNICODE = 'must be valid Unicode text';
/**
 * How deep a request value may nest. Validation (class-transformer) recurses per level and ran out
 * of stack on a few thousand; no Oz request needs more than a handful.
 */
export const MAX_DEPTH = 64;

/**
 * Whether `text` can be an identifier. Any other text names nothing, and compared with an ASCII
 * column it makes MySQL refuse the statement (a collation error) instead of finding no row.
 */
export function isIdentifierText(text: string): boolean {
  return PRINTABLE_ASCII.test(text);
}

export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

/** A field path with any lone surrogate of a key escaped, so the detail itself is valid text. */
function printable(path: string): string {
  return path.replace(
    new RegExp(LONE_SURROGATE.source, 'g'),
    (unit) => `\\u${unit.charCodeAt(0).toString(16)}`,
  );
}

/**
 * The path (`metadata.k`, `skills[2]`, `name`) of the first string in `value`, key or value, that
 * holds a lone surrogate; null when there is none.
 */
export function findInvalidUnicode(value: unknown, path = '', depth = 0): string | null {
  if (typeof value === 'string') return hasLoneSurrogate(value) ? path || 'value' : null;
  if (value === null || typeof value !== 'object') return null;
  if (depth >= MAX_DEPTH) {
    throw ApiError.invalid(printable(path || 'body'), `nested deeper than ${MAX_DEPTH} levels`);
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findInvalidUnicode(value[i], `${path}[${i}]`, depth + 1);
      if (found) return found;
    }
    return null;
  }
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    const childPath = path ? `${path}.${key}` : key;
    if (hasLoneSurrogate(key)) return childPath;
    const found = findInvalidUnicode(child, childPath, depth + 1);
    if (found) return found;
  }
  return null;
}

export function assertValidUnicode(value: unknown, path = ''): void {
  const field = findInvalidUnicode(value, path);
  if (field) throw ApiError.invalid(printable(field), INVALID_UNICODE);
}

/**
 * First of the global pipes: request bodies and path parameters (and query DTOs) with a lone
 * surrogate anywhere are refused before validation, so no endpoint ever stores one.
 */
@Injectable()
export class UnicodePipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type === 'body') assertValidUnicode(value);
    else if (metadata.type === 'query') assertValidUnicode(value, metadata.data ?? '');
    else if (metadata.type === 'param') {
      const name = metadata.data ?? 'path';
      assertValidUnicode(value, name);
      // Every path parameter is an identifier.
      if (typeof value === 'string' && !isIdentifierText(value)) {
        throw new ApiError('resource_not_found', `${name}: no resource has this identifier`);
      }
    }
    return value;
  }
}

/** `verify` of the JSON body parser: raw bytes that are not UTF-8 are a 400, not U+FFFD. */
export function verifyUtf8Body(_req: IncomingMessage, _res: ServerResponse, buffer: Buffer): void {
  if (!isUtf8(buffer)) {
    throw Object.assign(new Error(`request body: ${INVALID_UNICODE} (UTF-8)`), {
      status: 400,
      statusCode: 400,
      type: 'entity.verify.failed',
    });
  }
}

/**
 * Express middleware for every query string: each name and value must percent-decode to UTF-8
 * (qs keeps an undecodable one raw) and hold no lone surrogate; hand-parsed queries see only
 * checked text.
 */
export function unicodeQueryMiddleware(req: Request, _res: Response, next: NextFunction): void {
  const url = req.originalUrl ?? req.url ?? '';
  const mark = url.indexOf('?');
  if (mark < 0) return next();
  for (const pair of url.slice(mark + 1).split('&')) {
    const eq = pair.indexOf('=');
    const rawName = eq < 0 ? pair : pair.slice(0, eq);
    const name = safeDecode(rawName);
    const value = eq < 0 ? '' : safeDecode(pair.slice(eq + 1));
    if (name === null) return next(ApiError.invalid('query parameter', INVALID_UNICODE));
    if (value === null || hasLoneSurrogate(value) || hasLoneSurrogate(name)) {
      return next(ApiError.invalid(printable(name), INVALID_UNICODE));
    }
  }
  next();
}

function safeDecode(text: string): string | null {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}
