import { DEFAULT_TOOLS } from '../tools';
import { ToolsFileError } from '../tools/config-file';
import { SAMPLE_TOOLS } from '../tools/samples';
import type { ToolDefinition } from '../tools/types';

/**
 * The tools `serve` offers: the sample tools when asked for, the default tools, then those of the tools file, in the
 * order `tools/list` shows them. Throws {@link ToolsFileError} when a declared tool takes the name of a built-in tool
 * served here (a sample's name is free when the samples are not served).
 */
export function servedTools(options: { samples: boolean; declared: readonly ToolDefinition[]; file?: string }): ToolDefinition[] {
  const builtIn = options.samples ? [...SAMPLE_TOOLS, ...DEFAULT_TOOLS] : [...DEFAULT_TOOLS];
  const clash = options.declared.find((tool) => builtIn.some((served) => served.name === tool.name));
  if (clash)
    throw new ToolsFileError(`${options.file ?? 'tools file'}: tool "${clash.name}" is already a built-in tool; pick another name`);
  return [...builtIn, ...options.declared];
}
