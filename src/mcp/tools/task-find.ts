import { z } from 'zod';
import { argumentsDigest } from '../../util/arguments-digest';
import { zodSchema } from './schema';
import { statusContent, text } from './task-tool-support';
import type { BridgeToolContext, DirectTool } from './types';

/** How far back `task_find` looks: a view asks within seconds of the call it was opened on. */
export const TASK_FIND_WINDOW_MS = 10 * 60_000;

const TaskFindInputSchema = z.object({
  tool: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('The name of the tool whose call started the task; absent: any tool whose call these arguments are.'),
  arguments: z.record(z.string(), z.unknown()).describe('The arguments of that call, as they were sent.'),
});

/** What `task_find` takes. */
export type TaskFindInput = z.infer<typeof TaskFindInputSchema>;

/**
 * `task_find`: the caller's most recent task started by a call of `tool` with these arguments (within
 * {@link TASK_FIND_WINDOW_MS}). For the task view, whose host may hand it a call's arguments and no task id (a host
 * that follows the task itself): with it the view follows the task as any other. A task matches when the arguments,
 * checked as a call of the task's tool, give the digest of the workflow input its meta keeps; only the caller's own
 * tasks are looked at. Without `tool` (a host that does not tell the view which tool it was opened on) any workflow
 * tool's task may match. A tool whose confirmation changes the input is found by the confirmed input only.
 */
export const taskFindTool: DirectTool<TaskFindInput, BridgeToolContext> = {
  kind: 'direct',
  name: 'task_find',
  title: 'Find a task by its call',
  description:
    "Finds the caller's most recent task (of the last ten minutes) started by a call of the given tool with the given " +
    'arguments, for a view that knows the call but not its task id, and tells its status as task_status does.',
  input: zodSchema(TaskFindInputSchema),
  annotations: { readOnlyHint: true, idempotentHint: true },
  appOnly: true,
  answersAtOnce: () => true,
  handler: async ({ tool: name, arguments: args }, context) => {
    if (name !== undefined) {
      const tool = context.confirmations.tool(name);
      if (!tool) {
        return text(`No tool named "${name}" starts tasks on this server; name the tool whose call started the task.`, { isError: true });
      }
      const checked = tool.input.check(args);
      if (!checked.ok) {
        return text(`These arguments are not a valid call of ${name} (${checked.problems.join('; ')}), so no task was started with them.`, {
          isError: true,
        });
      }
    }
    // The digest of the arguments as a call of each tool met (undefined: not a valid call of it).
    const digests = new Map<string, string | undefined>();
    const digestAs = (tool: string): string | undefined => {
      if (!digests.has(tool)) {
        const checked = context.confirmations.tool(tool)?.input.check(args);
        digests.set(tool, checked?.ok ? argumentsDigest(checked.value) : undefined);
      }
      return digests.get(tool);
    };
    const views = await context.core.startedWithin(context.principal, TASK_FIND_WINDOW_MS);
    const found = views
      .filter((view) => view.tool !== undefined && (name === undefined || view.tool === name))
      .filter((view) => view.argumentsDigest !== undefined && view.argumentsDigest === digestAs(view.tool!))
      .sort((a, b) => Date.parse(b.task.createdAt) - Date.parse(a.task.createdAt))[0];
    const call = name ?? 'a tool';
    if (!found) {
      return text(`No task of yours started by ${call} with these arguments in the last ten minutes (yet).`, {
        structuredContent: { found: false },
      });
    }
    return text(`Task ${found.task.taskId} was started by this call of ${found.tool}; it is ${found.task.status}.`, {
      structuredContent: { found: true, tool: found.tool, ...statusContent(found) },
    });
  },
};
