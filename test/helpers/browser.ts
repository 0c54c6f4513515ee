/**
 * A real headless Chromium for the view tests: Debian's `chromium` package, installed on first use when it is missing
 * (the tests run as root in CI), driven by playwright-core. No browser download.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { aptInstall } from '../../scripts/lib/apt';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The path of Debian's chromium, installing the package first if it is not there (see aptInstall). */
export async function chromiumPath(): Promise<string> {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  process.stderr.write(`[test] ${CHROMIUM} is missing: installing Debian's chromium package (once; about a minute)\n`);
  await aptInstall('chromium', `[ -x ${CHROMIUM} ]`);
  if (!existsSync(CHROMIUM)) throw new Error(`installing chromium did not produce ${CHROMIUM}`);
  return CHROMIUM;
}

/** Starts headless Chromium with a fresh profile and no background traffic (this machine has no internet). */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: await chromiumPath(),
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
