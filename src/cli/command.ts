import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A CLI command: its usage text, its options, and what it does with the parsed values. */
export interface Command {
  /** Words after `starport`, e.g. ['account', 'create']. */
  path: string[];
  summary: string;
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  run(values: Record<string, string | boolean | undefined>, io: CommandIo): Promise<number>;
}

export interface CommandIo {
  json: boolean;
  /** Writes the command's result: one JSON document with --json, else human text. */
  result(json: unknown, text: string): void;
}

/** Bad input from the operator: exit 1 with this message, no stack trace. */
export class UsageError extends Error {}

export function required(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

export function parse(command: Command, argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      options: { ...command.options, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: false,
      allowNegative: false,
    }).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
