import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A CLI command: its usage text, its options, and what it does with the parsed values. */
export interface Command {
  /** Words after `starport`, e.g. ['account', 'create']. */
  path: string[];
  summary: string;
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  /**
   * Names of positional arguments (e.g. ['id'] for `order show ID`), stored in `values` under
   * those names. Commands without it refuse positional arguments.
   */
  positionals?: string[];
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

export function parse(command: Command, argv: string[]): Record<string, string | boolean | undefined> {
  let parsed: { values: Record<string, string | boolean | (string | boolean)[] | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...command.options, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: command.positionals !== undefined,
      allowNegative: false,
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const names = command.positionals ?? [];
  if (parsed.positionals.length > names.length && !values.help) {
    throw new UsageError(`unexpected argument "${parsed.positionals[names.length]}"`);
  }
  names.forEach((name, i) => {
    values[name] = parsed.positionals[i];
  });
  return values;
}
