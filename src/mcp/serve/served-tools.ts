import path from 'node:path';
import { DEFAULT_TOOLS } from '../tools';
import { ToolsFileError } from '../tools/config-file';
import type { ToolDefinition } from '../tools/types';
import { UsageError } from './args';

/**
 * The example package (`examples/invoice-approval`), which a checkout installs beside the server as a workspace. An
 * installed package holds no examples.
 */
const SAMPLE_PACKAGE = 'invoice-approval-example';

/**
 * The sample tools of the invoice-approval example, for `serve --samples` in a checkout: its package's `tools` entry,
 * resolved by name. Throws {@link UsageError} saying what to do instead when this copy of the server has no example
 * beside it (an installed package).
 */
export function loadSampleTools(): readonly ToolDefinition[] {
  let entry: string;
  try {
    entry = require.resolve(`${SAMPLE_PACKAGE}/tools`);
  } catch {
    throw new UsageError(
      `--samples: the sample tools are the ${SAMPLE_PACKAGE} package of the repository's examples/invoice-approval, which this installation does not hold; ` +
        'serve your own tools with --tools FILE, or run the example from a checkout',
    );
  }
  if (path.extname(entry) === '.ts' && path.extname(__filename) !== '.ts') {
    throw new UsageError('--samples: the example is TypeScript, run by the server from its sources: npm run -s serve -- --samples');
  }
  return (require(entry) as { SAMPLE_TOOLS: readonly ToolDefinition[] }).SAMPLE_TOOLS;
}

/**
 * The tools `serve` offers: the sample tools when given, the default tools, then those of the tools file, in the order
 * `tools/list` shows them. Throws {@link ToolsFileError} when a declared tool takes the name of a built-in tool served
 * here (a sample's name is free when the samples are not served).
 */
export function servedTools(options: {
  samples?: readonly ToolDefinition[];
  declared: readonly ToolDefinition[];
  file?: string;
}): ToolDefinition[] {
  const builtIn = [...(options.samples ?? []), ...DEFAULT_TOOLS];
  const clash = options.declared.find((tool) => builtIn.some((served) => served.name === tool.name));
  if (clash)
    throw new ToolsFileError(`${options.file ?? 'tools file'}: tool "${clash.name}" is already a built-in tool; pick another name`);
  return [...builtIn, ...options.declared];
}
