import { Foundation1763780000000 } from './1763780000000-foundation';

/** Every migration, oldest first. Forward-only: add a new file, never edit an applied one. */
export const MIGRATIONS = [Foundation1763780000000];
