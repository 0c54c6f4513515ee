/**
 * Debian packages the suite and the scripts need (chromium, haproxy, postgresql), installed on first use when missing.
 * As root, or through `sudo -n`. Two processes that find one missing at once (two test files, say) install it once:
 * the install holds a lock of its own, and apt waits for a dpkg lock that someone else holds instead of failing.
 */
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';

const LOCK = '/tmp/temporal-mcp-apt-install.lock';

/** The command that installs `pkg` unless `present` (a shell test, such as `command -v haproxy`) already holds. */
function installCommand(pkg: string, present: string): string[] {
  const apt = 'apt-get -o DPkg::Lock::Timeout=600 -qq';
  const script = `${present} >/dev/null 2>&1 || { ${apt} update && ${apt} install -y --no-install-recommends ${pkg}; }`;
  const command = ['flock', LOCK, 'sh', '-c', script];
  return process.getuid?.() === 0 ? command : ['sudo', '-n', ...command];
}

const ENV = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };

/** Installs Debian's `pkg` unless `present` holds, in a child process (this one's event loop runs on). */
export async function aptInstall(pkg: string, present: string): Promise<void> {
  const [command, ...args] = installCommand(pkg, present);
  await promisify(execFile)(command, args, { env: ENV, maxBuffer: 64 * 1024 * 1024, timeout: 15 * 60_000 }).catch(
    (error: Error & { stderr?: string }) => {
      throw new Error(`installing Debian's ${pkg} failed: ${error.stderr || error.message}; install it as root (apt-get install ${pkg})`);
    },
  );
}

/** {@link aptInstall}, waiting: for the scripts' synchronous set-up, where nothing else runs meanwhile. */
export function aptInstallSync(pkg: string, present: string): void {
  const [command, ...args] = installCommand(pkg, present);
  const result = spawnSync(command, args, { stdio: ['ignore', 'ignore', 'inherit'], env: ENV, timeout: 15 * 60_000 });
  if (result.status !== 0)
    throw new Error(`installing Debian's ${pkg} failed (exit ${result.status}); install it as root (apt-get install ${pkg})`);
}
