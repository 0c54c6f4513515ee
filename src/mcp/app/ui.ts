/**
 * MCP Apps (the `io.modelcontextprotocol/ui` extension): the task view every task tool declares, served as a `ui://`
 * resource, for hosts that render Apps. Both protocol generations serve it the same way.
 */
import type { ReadResourceResult, Resource } from '@modelcontextprotocol/sdk/types.js';
import { JsonRpcError } from '../../util/json-rpc-error';
import { TASK_VIEW_URI, taskViewHtml } from './view-html';

export { TASK_VIEW_URI };

/** The extension id a host declares in its client capabilities when it renders Apps. */
export const UI_EXTENSION = 'io.modelcontextprotocol/ui';

/** The MIME type of an App's HTML resource. */
export const APP_MIME_TYPE = 'text/html;profile=mcp-app';

/** The `_meta` key older hosts read the resource URI from (newer ones read `_meta.ui.resourceUri`). */
const LEGACY_RESOURCE_URI_META = 'ui/resourceUri';

/** The tool `_meta` that points a host at the task view. */
export function taskViewToolMeta(): Record<string, unknown> {
  return { ui: { resourceUri: TASK_VIEW_URI }, [LEGACY_RESOURCE_URI_META]: TASK_VIEW_URI };
}

/** The tool `_meta` of a tool only Apps call: hosts that render Apps keep it off the model's tool list. */
export function appOnlyToolMeta(): Record<string, unknown> {
  return { ui: { visibility: ['app'] } };
}

/** True when the client says it renders App views (HTML resources of {@link APP_MIME_TYPE}). */
export function rendersApps(capabilities: { extensions?: Record<string, unknown> } | undefined): boolean {
  const ui = capabilities?.extensions?.[UI_EXTENSION] as { mimeTypes?: unknown } | undefined;
  return Array.isArray(ui?.mimeTypes) && ui.mimeTypes.includes(APP_MIME_TYPE);
}

/** The resources this server lists: the task view. */
export const APP_RESOURCES: Resource[] = [
  {
    uri: TASK_VIEW_URI,
    name: 'task-view',
    title: 'Task view',
    description:
      'Follows a task in the conversation: its status, its questions as forms, its result; cancel and release. ' +
      "Opened on approvals_inbox, the approver's inbox: the questions awaiting them, each with its details and its form.",
    mimeType: APP_MIME_TYPE,
  },
];

/** resources/read: the task view's HTML; any other URI is -32002 (resource not found). */
export async function readAppResource(uri: string): Promise<ReadResourceResult> {
  if (uri !== TASK_VIEW_URI) {
    throw new JsonRpcError(-32002, `Resource not found: ${uri}; this server has ${TASK_VIEW_URI}`, { uri });
  }
  return {
    contents: [
      {
        uri,
        mimeType: APP_MIME_TYPE,
        text: await taskViewHtml(),
        // One self-contained file: it loads nothing from anywhere, so it asks for no domains.
        _meta: { ui: { prefersBorder: true } },
      },
    ],
  };
}
