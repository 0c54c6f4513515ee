import { rmSync } from 'node:fs';
import { temporalDev, TEST_ENV } from './dev-server';

/** Stops the run's dev server and removes its state. */
export default async function globalTeardown(): Promise<void> {
  const stateDir = process.env[TEST_ENV.stateDir];
  const port = Number(process.env[TEST_ENV.port]);
  if (!stateDir || !port) return;
  await temporalDev('stop', port, stateDir);
  rmSync(stateDir, { recursive: true, force: true });
}
