/**
 * The task view: an MCP App that follows one task inside the chat. The host hands it the result of the tool call
 * that started the task; from there on it learns everything through the server's companion tools, called through
 * the host (task_status, task_respond, task_result, task_cancel, and the follow-up tools a status offers).
 */
import { App } from '@modelcontextprotocol/ext-apps';
import { InboxPage } from './inbox-page';
import { TaskFinder } from './task-finder';
import { TaskPage } from './task-page';
import { applyHostContext } from './theme';
import { ApprovalTools, readInbox, record, taskIdOf, TaskTools } from './tools';

/**
 * The page renders into an element of its own, never over the body: a host may put this document inside its own body,
 * and the view's styles (and the host's) must stay.
 */
function viewRoot(): HTMLElement {
  const existing = document.getElementById('task-view');
  if (existing) return existing;
  const root = document.createElement('div');
  root.id = 'task-view';
  document.body.append(root);
  return root;
}

const app = new App({ name: 'temporal-mcp-tasks-task-view', version: '0.1.0' }, {}, { autoResize: true });

async function openLink(url: string): Promise<boolean> {
  if (!app.getHostCapabilities()?.openLinks) return false;
  try {
    return !(await app.openLink({ url })).isError;
  } catch {
    return false;
  }
}

function formatting() {
  const context = app.getHostContext();
  return { locale: context?.locale, timeZone: context?.timeZone };
}

const root = viewRoot();
const tools = new TaskTools(app);
const page = new TaskPage({ tools, openLink, outputSchema: () => app.getHostContext()?.toolInfo?.tool.outputSchema, formatting }, root);
/**
 * Looks for the task of the call when the host hands over its arguments and, for a while, nothing naming the task (a
 * host that follows the task itself may never tell the view how it ended, not even that it was cancelled).
 */
const finder = new TaskFinder(tools, (taskId, byCall) => {
  if (!inbox) page.follow(taskId, byCall);
});
/** The inbox mode, once the view is shown for an `approvals_inbox` result. */
let inbox: InboxPage | undefined;

function hostContextChanged(): void {
  const context = app.getHostContext();
  applyHostContext(context);
  const tool = context?.toolInfo?.tool;
  if (!inbox) page.setTitle(tool?.title ?? tool?.annotations?.title);
}

// Handlers first: the host may send the tool input and result right after the handshake.
app.ontoolresult = (result) => {
  finder.stop();
  const taskId = taskIdOf(result);
  if (taskId) {
    page.follow(taskId);
    return;
  }
  const listing = page.following ? undefined : readInbox(result.structuredContent);
  if (listing) {
    inbox ??= new InboxPage({ tools: new ApprovalTools(app), openLink, formatting }, root);
    inbox.showList(listing);
    return;
  }
  // A host that followed the task itself hands over its final result, which names no task: shown as it is.
  page.showFinal(result);
};
app.ontoolinput = ({ arguments: args }) => {
  // A view opened on a companion tool's call (task_status and the like) knows its task from the arguments already.
  const taskId = record(args)?.taskId;
  if (typeof taskId === 'string' && taskId && !page.following) {
    page.follow(taskId);
    return;
  }
  // MCP Inspector 2.12 does not say which tool the view was opened on (no toolInfo): the server then tries each.
  if (args && !page.following) finder.start(app.getHostContext()?.toolInfo?.tool.name, args);
};
app.ontoolcancelled = ({ reason }) => {
  finder.stop();
  if (!inbox) page.cancelledByHost(reason);
};
app.onhostcontextchanged = hostContextChanged;

app.connect().then(hostContextChanged, (error: unknown) => page.disconnected(error));
