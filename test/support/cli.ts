import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Runs the real `bin/starport` (the compiled CLI in dist/: run `npm run build` first) as a
 * child process, the way an operator would, against a DATA_DIR of the test's choosing.
 */
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = path.join(PROJECT_ROOT, 'bin', 'starport');

export interface CliResult {
  /** Exit code; null when the process was killed (timeout or signal). */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  durationMs: number;
}

export interface CliOptions {
  /** Extra environment (merged over this process's environment). */
  env?: Record<string, string | undefined>;
  timeoutMs?: number;
}

/** A fresh, empty temporary folder; removed by `removeDir`. */
export function makeTempDir(prefix = 'starport-cli-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function removeDir(dir: string | undefined): void {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}

/** The environment a CLI or serve child gets: ours, minus settings that would leak into it. */
export function childEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of [
    'DATA_DIR',
    'DATABASE_URL',
    'PORT',
    'HOST',
    'OPERATOR_HOST',
    'OPERATOR_PORT',
    'PUBLIC_URL',
    'LOG_LEVEL',
    'TEST_FULFILMENT_DELAY_MS',
    'RATE_LIMIT_RPS',
    'RATE_LIMIT_BURST',
    'RATE_LIMIT_NODES',
    'NODE_OPTIONS',
  ]) {
    delete env[name];
  }
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: childEnv(options.env), cwd: PROJECT_ROOT, timeout: options.timeoutMs ?? 30_000, maxBuffer: 16 * 1024 * 1024, encoding: 'utf8' },
      (error, stdout, stderr) => {
        let code: number | null = 0;
        let signal: NodeJS.Signals | null = null;
        if (error) {
          const e = error as NodeJS.ErrnoException & { code?: unknown; signal?: NodeJS.Signals | null };
          code = typeof e.code === 'number' ? e.code : null;
          signal = e.signal ?? null;
        }
        resolve({ code, signal, stdout, stderr, durationMs: performance.now() - started });
      },
    );
  });
}

/**
 * A CLI bound to one database: `env` is a FreshDatabase's env (DATA_DIR, plus DATABASE_URL
 * on PostgreSQL), or any environment to run the commands with.
 */
export function cliFor(env: Record<string, string | undefined>) {
  return (args: string[], options: CliOptions = {}) => runCli(args, { ...options, env: { ...env, ...options.env } });
}

/**
 * Parses stdout as exactly one JSON document (throws otherwise, with the output in the
 * message so a failing test shows what the command printed).
 */
export function parseJsonStdout(result: CliResult): any {
  try {
    return JSON.parse(result.stdout);
  } catch (error) {
    throw new Error(
      `stdout is not exactly one JSON document (${(error as Error).message}); exit ${result.code}\nstdout: ${JSON.stringify(result.stdout)}\nstderr: ${result.stderr}`,
    );
  }
}

/** A readable summary for assertion messages. */
export function describeRun(args: string[], result: CliResult): string {
  return `starport ${args.join(' ')} → exit ${result.code}${result.signal ? ` (${result.signal})` : ''}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
}

/** Runs tasks with at most `limit` in flight; results in input order. */
export async function pool<T, R>(items: readonly T[], limit: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index] as T, index);
    }
  });
  await Promise.all(workers);
  return results;
}
