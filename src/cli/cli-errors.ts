/** Wrong command line: the message and a usage hint go to stderr, exit code 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}

/** A command that could not do its job (unknown team, database down): exit code 1. */
export class CommandError extends Error {}
