/**
 * A real headless Chromium for the view tests: Debian's `chromium` package, installed on first use when it is missing
 * (the tests run as root in CI), driven by playwright-core. No browser download.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The path of Debian's chromium, installing the package first if it is not there. */
export function chromiumPath(): string {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  console.error(`[test] ${CHROMIUM} is missing: installing Debian's chromium package (once; about a minute)`);
  const asRoot = process.getuid?.() === 0 ? [] : ['sudo', '-n'];
  const run = (args: string[]) =>
    execFileSync(asRoot[0] ?? args[0], [...asRoot.slice(1), ...(asRoot.length > 0 ? args : args.slice(1))], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  run(['apt-get', 'update', '-qq']);
  run(['apt-get', 'install', '-y', '-qq', '--no-install-recommends', 'chromium']);
  if (!existsSync(CHROMIUM)) throw new Error(`installing chromium did not produce ${CHROMIUM}`);
  return CHROMIUM;
}

/** Starts headless Chromium with a fresh profile and no background traffic (this machine has no internet). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
