import { type ChildProcess, spawn } from 'node:child_process';
import { BIN, childEnv, PROJECT_ROOT } from './cli.js';

/**
 * `bin/starport serve` as a separate OS process: the API over a real socket, sharing its
 * SQLite file with whatever else the test points at the same DATA_DIR (CLI runs, a second
 * server).
 */
export interface ServeProcess {
  /** http://HOST:PORT from the `listening on` line. */
  url: string;
  pid: number;
  child: ChildProcess;
  /** Everything the process printed so far (for assertion messages). */
  output(): { stdout: string; stderr: string };
  /** Sends the signal and waits for the exit (SIGKILL after `timeoutMs`, reported as such). */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<ServeExit>;
  /** Resolves when the process exits, for whatever reason. */
  exited: Promise<ServeExit>;
}

export interface ServeExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** True when it had to be killed because it did not stop in time. */
  killed: boolean;
  stdout: string;
  stderr: string;
}

const LISTENING = /^listening on (http:\/\/\S+)\s*$/m;

export async function startServe(env: Record<string, string | undefined>, startTimeoutMs = 20_000, args: string[] = []): Promise<ServeProcess> {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], {
    env: childEnv({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env }),
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let killed = false;
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<ServeExit>((resolve) => {
    child.once('exit', (code, signal) => {
      // Let the pipes drain before reporting the output.
      const done = () => resolve({ code, signal, killed, stdout, stderr });
      if (child.stdout.readableEnded && child.stderr.readableEnded) done();
      else child.once('close', done);
    });
  });

  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      child.kill('SIGKILL');
      reject(new Error(`serve did not print "listening on" within ${startTimeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, startTimeoutMs);
    const onData = () => {
      const match = LISTENING.exec(stdout);
      if (match) {
        cleanup();
        resolve(match[1] as string);
      }
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      cleanup();
      reject(new Error(`serve exited (code ${code}, signal ${signal}) before listening\nstdout: ${stdout}\nstderr: ${stderr}`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.stdout.off('data', onData);
      child.off('exit', onExit);
    };
    child.stdout.on('data', onData);
    child.once('exit', onExit);
  });

  const stop = async (signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 15_000): Promise<ServeExit> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
      const timer = setTimeout(() => {
        killed = true;
        child.kill('SIGKILL');
      }, timeoutMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    }
    return exited;
  };

  return { url, pid: child.pid as number, child, output: () => ({ stdout, stderr }), stop, exited };
}
