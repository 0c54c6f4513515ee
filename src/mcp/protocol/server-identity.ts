/** What the server says of itself to every client generation: its name, version and instructions. */
import { PACKAGE_NAME, PACKAGE_VERSION } from '../../version';

/** What the server tells a client about itself, in every generation. */
export const SERVER_INSTRUCTIONS =
  "Task tools run as durable tasks backed by Temporal workflows. A task may pause for a person's input " +
  '(status input_required); the question comes as an elicitation, or through the task_status and task_respond tools.';

/** Server name and version announced at initialize (2025-11-25) and in `server/discover` (2026-07-28). */
export const SERVER_INFO = { name: PACKAGE_NAME, version: PACKAGE_VERSION };
