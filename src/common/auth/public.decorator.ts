import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';

export const IS_PUBLIC = 'ambient:isPublic';

/**
 * Marks a route that answers without an API key (published as `x-ambient-public: true`; a public
 * route that also takes a key, for more, checks it itself).
 */
export const Public = () =>
  applyDecorators(SetMetadata(IS_PUBLIC, true), ApiExtension('x-ambient-public', true));
