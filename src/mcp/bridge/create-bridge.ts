/** {@link createBridge} of the package's main entry: the bridge of `../bridge.ts`, shown as its public face. */
import { createBridge as connectBridge } from '../bridge';
import type { CreateBridgeOptions } from './bridge-options';
import type { Bridge } from './public-bridge';

/**
 * Connects to Temporal and prepares the task core. The longest ttl granted defaults to the namespace's retention,
 * so a task is never forgotten by Temporal before its ttl has passed.
 */
export function createBridge(options: CreateBridgeOptions): Promise<Bridge> {
  return connectBridge(options);
}
