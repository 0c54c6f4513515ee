import { spawn } from 'node:child_process';
import { ROOT } from './dev-server';
import { serverEnv } from './processes';

/** What a client run printed and how it ended. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `npm run -s client -- …args` as a user would, with no stdin. */
export function runClient(args: string[], taskQueue: string, env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '-s', 'client', '--', ...args], {
      cwd: ROOT,
      env: serverEnv(taskQueue, env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
