/** Thrown for a bad setting; main.ts prints its message as the single line that stops start-up. */
export class ConfigError extends Error {}
