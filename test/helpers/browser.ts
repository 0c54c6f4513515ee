/**
 * A real headless Chromium for the view tests: Debian's `chromium` package, installed on first use when it is missing
 * (the tests run as root in CI), driven by playwright-core. No browser download.
 */
import { existsSync } from 'node:fs';
import type { KeyObject } from 'node:crypto';
import { chromium, type Browser, type CDPSession, type Page } from 'playwright-core';
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

/** A passkey the test made itself, to hand to a virtual authenticator: its credential id, its private key, where it is for. */
export interface TestPasskey {
  id: Buffer;
  privateKey: KeyObject;
  rpId: string;
  userHandle: string;
}

/**
 * Gives `page` a virtual authenticator (the DevTools WebAuthn domain): a platform authenticator with resident keys and
 * user verification that verifies and consents on its own; with `passkey`, holding that credential already. Returns
 * the DevTools session it lives in.
 */
export async function addVirtualAuthenticator(page: Page, passkey?: TestPasskey): Promise<CDPSession> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  if (passkey) {
    await cdp.send('WebAuthn.addCredential', {
      authenticatorId,
      credential: {
        credentialId: passkey.id.toString('base64'),
        isResidentCredential: true,
        rpId: passkey.rpId,
        privateKey: passkey.privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
        userHandle: Buffer.from(passkey.userHandle).toString('base64'),
        signCount: 0,
      },
    });
  }
  return cdp;
}
