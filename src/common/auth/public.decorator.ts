import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'ambient:isPublic';

/** Marks a route that answers without an API key. */
export const Public = () => SetMetadata(IS_PUBLIC, true);
