import type { ParseArgsConfig } from 'node:util';
import type { AppConfig } from '../config/app-config';
import { UsageError } from './cli-errors';

export type OptionValues = Record<string, string | string[] | boolean | undefined>;

export interface CliIo {
  /** Loaded on first use, so `--help` works even with a broken configuration. */
  config(): AppConfig;
  out(line: string): void;
  err(line: string): void;
}

export interface CliCommand {
  /** The words that select the command, e.g. `api-keys create`. */
  name: string;
  synopsis: string;
  summary: string;
  /** Extra lines of `--help` below the synopsis. */
  details: string[];
  options: NonNullable<ParseArgsConfig['options']>;
  /** Names of the positional arguments it takes (all required), passed in `values` by name. */
  positionals?: string[];
  /** Resolves with the exit code when it is not simply 0. */
  run(values: OptionValues, io: CliIo): Promise<void | number>;
}

export function helpText(command: CliCommand): string {
  return [`Usage: ${command.synopsis}`, '', command.summary, ...command.details, ''].join('\n');
}

/** A required option's trimmed text, at most `max` characters. */
export function requiredText(values: OptionValues, option: string, max = 128): string {
  const value = values[option];
  if (typeof value !== 'string' || value.trim() === '') {
    throw new UsageError(`missing --${option} <value>`);
  }
  return checkedText(value, option, max);
}

export function optionalText(values: OptionValues, option: string, max = 128): string | null {
  const value = values[option];
  return typeof value === 'string' ? checkedText(value, option, max) : null;
}

function checkedText(value: string, option: string, max: number): string {
  const text = value.trim();
  if (text === '') throw new UsageError(`--${option} must not be empty`);
  if (text.length > max) throw new UsageError(`--${option} must be at most ${max} characters`);
  return text;
}
