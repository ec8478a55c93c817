import { SetMetadata } from '@nestjs/common';

export const RUN_SCOPED = 'ambient:runScoped';

/**
 * Marks a route for run-scoped keys, the keys one execution of a run reports with: only they are
 * accepted there, and they are refused on every route without this mark.
 */
export const RunScoped = () => SetMetadata(RUN_SCOPED, true);
