/**
 * The server's companion tools, called through the host, and readers for what they answer.
 */
import type { App } from '@modelcontextprotocol/ext-apps';
import {
  TASK_STATUSES,
  type FieldSchema,
  type FormContent,
  type FormQuestion,
  type InboxEntry,
  type InboxPage,
  type PendingQuestion,
  type Progress,
  type StatusReport,
  type TaskAction,
  type TaskInfo,
  type TaskStatus,
} from './types';

/** A tool result as the host hands it over. */
export type ToolResult = Awaited<ReturnType<App['callServerTool']>>;

/** `_meta` key tying a result to its task (MCP 2025-11-25, tasks). */
const RELATED_TASK_META = 'io.modelcontextprotocol/related-task';

/** The approver's tool calls, made through the host. */
export class ApprovalTools {
  constructor(private readonly app: App) {}

  /** `approvals_inbox`: the questions awaiting the caller, a page at a time. */
  inbox(cursor?: string): Promise<ToolResult> {
    return this.app.callServerTool({ name: 'approvals_inbox', arguments: cursor ? { cursor } : {} });
  }

  /** `approvals_answer` with `accept` and the form's content, and the person's own signature when they give one. */
  accept(entry: InboxEntry, content: FormContent, signature?: unknown): Promise<ToolResult> {
    return this.app.callServerTool({
      name: 'approvals_answer',
      arguments: {
        taskId: entry.taskId,
        key: entry.question.key,
        action: 'accept',
        content,
        ...(signature !== undefined && { signature }),
      },
    });
  }

  /** `approvals_answer` with `decline`, and the person's own signature when they give one. */
  decline(entry: InboxEntry, signature?: unknown): Promise<ToolResult> {
    return this.app.callServerTool({
      name: 'approvals_answer',
      arguments: { taskId: entry.taskId, key: entry.question.key, action: 'decline', ...(signature !== undefined && { signature }) },
    });
  }
}

/** The tool calls the view makes; one instance per connection to the host. */
export class TaskTools {
  constructor(private readonly app: App) {}

  /** `task_status`: the task, its questions, progress and follow-up actions. */
  status(taskId: string): Promise<ToolResult> {
    return this.call('task_status', { taskId });
  }

  /** `task_result`: the result of a finished task, as the tool that started it returned it. */
  result(taskId: string): Promise<ToolResult> {
    return this.call('task_result', { taskId });
  }

  /** `task_respond` with `accept` and the answer's content. */
  accept(taskId: string, key: string, content: FormContent): Promise<ToolResult> {
    return this.call('task_respond', { taskId, key, action: 'accept', content });
  }

  /** `task_respond` with `decline`. */
  decline(taskId: string, key: string): Promise<ToolResult> {
    return this.call('task_respond', { taskId, key, action: 'decline' });
  }

  /** `task_cancel`. */
  cancel(taskId: string): Promise<ToolResult> {
    return this.call('task_cancel', { taskId });
  }

  /** `task_find`: the caller's most recent task started by a call of `tool` (any tool, when unknown) with `args`. */
  find(tool: string | undefined, args: Record<string, unknown>): Promise<ToolResult> {
    return this.call('task_find', { ...(tool !== undefined && { tool }), arguments: args });
  }

  /** Runs an action the status offered, with the task id first so that the action's own arguments win. */
  run(action: TaskAction, taskId: string): Promise<ToolResult> {
    return this.call(action.tool, { taskId, ...action.arguments });
  }

  private call(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    return this.app.callServerTool({ name, arguments: args });
  }
}

/** The text blocks of a result, one paragraph each. */
export function textOf(result: ToolResult): string {
  return result.content
    .flatMap((block) => (block.type === 'text' ? [block.text] : []))
    .join('\n')
    .trim();
}

/** The task a tool result belongs to: a pending task's id, or the related-task `_meta`. */
export function taskIdOf(result: ToolResult): string | undefined {
  const pending = record(record(result.structuredContent)?.pendingTask)?.taskId;
  if (isId(pending)) return pending;
  const related = record(record(result._meta)?.[RELATED_TASK_META])?.taskId;
  return isId(related) ? related : undefined;
}

/** The task id of a `task_find` answer that found one; undefined otherwise. */
export function readFound(structured: unknown): string | undefined {
  const body = record(structured);
  if (body?.found !== true) return undefined;
  const taskId = record(body.task)?.taskId;
  return isId(taskId) ? taskId : undefined;
}

/** Reads a `task_status` answer; undefined when it does not have the expected shape. */
export function readStatus(structured: unknown): StatusReport | undefined {
  const body = record(structured);
  const task = readTask(body?.task);
  if (!body || !task) return undefined;
  const listed = Array.isArray(body.questions) ? body.questions : body.question !== undefined ? [body.question] : [];
  return {
    task,
    questions: listed.map(readQuestion).filter((question): question is PendingQuestion => question !== undefined),
    progress: readProgress(body.progress),
    actions: Array.isArray(body.actions) ? body.actions.map(readAction).filter((action): action is TaskAction => action !== undefined) : [],
  };
}

/** Reads an `approvals_inbox` answer; undefined when it does not have that shape. */
export function readInbox(structured: unknown): InboxPage | undefined {
  const body = record(structured);
  if (!body || !Array.isArray(body.items)) return undefined;
  const entries: InboxEntry[] = [];
  for (const value of body.items) {
    const item = record(value);
    if (!item || !isId(item.taskId)) continue;
    const question = readQuestion({ ...item, mode: 'form' });
    if (!question || question.mode !== 'form') continue;
    const count = (n: unknown, fallback: number) => (typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : fallback);
    entries.push({
      taskId: item.taskId,
      question: question as FormQuestion,
      tool: typeof item.tool === 'string' ? item.tool : undefined,
      required: count(item.required, 1),
      accepted: count(item.accepted, 0),
      askedAt: typeof item.askedAt === 'string' ? item.askedAt : undefined,
      dueAt: typeof item.dueAt === 'string' ? item.dueAt : undefined,
      mustSign: item.mustSign === true,
      passkeyLink: typeof item.passkeyLink === 'string' && /^https?:\/\//.test(item.passkeyLink) ? item.passkeyLink : undefined,
    });
  }
  return { entries, nextCursor: typeof body.nextCursor === 'string' ? body.nextCursor : undefined };
}

function readTask(value: unknown): TaskInfo | undefined {
  const task = record(value);
  if (!task || !isId(task.taskId) || !TASK_STATUSES.includes(task.status as TaskStatus)) return undefined;
  return {
    taskId: task.taskId,
    status: task.status as TaskStatus,
    statusMessage: typeof task.statusMessage === 'string' ? task.statusMessage : undefined,
    createdAt: typeof task.createdAt === 'string' ? task.createdAt : undefined,
    lastUpdatedAt: typeof task.lastUpdatedAt === 'string' ? task.lastUpdatedAt : undefined,
    pollInterval: typeof task.pollInterval === 'number' && Number.isFinite(task.pollInterval) ? task.pollInterval : undefined,
  };
}

function readQuestion(value: unknown): PendingQuestion | undefined {
  const question = record(value);
  if (!question || typeof question.key !== 'string' || typeof question.message !== 'string') return undefined;
  const { key, message } = question;
  if (question.mode === 'url') {
    if (typeof question.url !== 'string') return undefined;
    const elicitationId = typeof question.elicitationId === 'string' ? question.elicitationId : undefined;
    return { key, mode: 'url', message, url: question.url, elicitationId };
  }
  const schema = record(question.requestedSchema);
  const properties = record(schema?.properties);
  if ((question.mode !== undefined && question.mode !== 'form') || !properties) return undefined;
  const fields: Record<string, FieldSchema> = {};
  for (const [name, property] of Object.entries(properties)) {
    const field = record(property);
    if (field) fields[name] = field as FieldSchema;
  }
  const required = Array.isArray(schema?.required) ? schema.required.filter((name): name is string => typeof name === 'string') : [];
  return {
    key,
    mode: 'form',
    message,
    requestedSchema: { type: 'object', properties: fields, required },
    ...(question.subject !== undefined && { subject: question.subject }),
  };
}

function readProgress(value: unknown): Progress | undefined {
  const progress = record(value);
  if (!progress || typeof progress.progress !== 'number') return undefined;
  return {
    progress: progress.progress,
    total: typeof progress.total === 'number' && progress.total > 0 ? progress.total : undefined,
    message: typeof progress.message === 'string' ? progress.message : undefined,
  };
}

function readAction(value: unknown): TaskAction | undefined {
  const action = record(value);
  if (!action || typeof action.tool !== 'string' || typeof action.title !== 'string') return undefined;
  return {
    tool: action.tool,
    title: action.title,
    arguments: record(action.arguments) ?? {},
    description: typeof action.description === 'string' ? action.description : undefined,
  };
}

/** The value as a plain object, or undefined. */
export function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function isId(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}
