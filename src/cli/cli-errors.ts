/** Wrong command line: the message goes to stderr with the usage hint, exit code 2. */
export class UsageError extends Error {}

/** A command that could not do its job (unknown team, database down): exit code 1. */
export class CommandError extends Error {}
