/**
 * A minimal MCP Apps host for the view tests, built on ext-apps' AppBridge: it shows a view in a sandboxed iframe
 * the width of a chat column, hands it the tool call's input and result, and passes its tool calls to the test, which
 * makes them with a real MCP client against the real server.
 */
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

interface MountOptions {
  html: string;
  tool: Record<string, unknown>;
  toolInput: Record<string, unknown>;
  /** Absent: the host follows the task itself and hands the view no result (yet). */
  toolResult?: Record<string, unknown>;
  theme: 'light' | 'dark';
  /**
   * `document` (default): the view's HTML is the iframe's document. `body`: the host puts it inside a body of its own,
   * as some hosts do (its head ends up in the body).
   */
  embedding?: 'document' | 'body';
}

declare global {
  interface Window {
    /** Provided by the test: makes the view's tool call through the MCP client. */
    hostCallTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<Record<string, unknown>>;
    mountView(options: MountOptions): Promise<void>;
    /** Tells the view the host cancelled the tool call (`ui/notifications/tool-cancelled`). */
    cancelToolCall(reason: string): Promise<void>;
  }
}

window.mountView = async ({ html, tool, toolInput, toolResult, theme, embedding = 'document' }) => {
  document.documentElement.dataset.theme = theme;
  const iframe = document.createElement('iframe');
  iframe.title = 'Task view';
  iframe.setAttribute('sandbox', 'allow-scripts allow-forms');
  document.getElementById('chat')!.append(iframe);
  const bridge = new AppBridge(
    null,
    { name: 'test-host', version: '1.0.0' },
    { serverTools: {}, openLinks: {} },
    {
      hostContext: {
        theme,
        displayMode: 'inline',
        availableDisplayModes: ['inline'],
        platform: 'web',
        containerDimensions: { maxWidth: 360 },
        toolInfo: { tool: tool as never },
      },
    },
  );
  bridge.oncalltool = (params) => window.hostCallTool(params as never) as never;
  bridge.onopenlink = async () => ({});
  bridge.onsizechange = ({ height }) => {
    if (height) iframe.style.height = `${Math.ceil(height)}px`;
  };
  bridge.oninitialized = () => {
    void bridge.sendToolInput({ arguments: toolInput });
    if (toolResult) void bridge.sendToolResult(toolResult as never);
  };
  window.cancelToolCall = (reason) => bridge.sendToolCancelled({ reason });
  // The iframe's window stays the same object when its document loads, so the bridge listens before the view starts.
  await bridge.connect(new PostMessageTransport(iframe.contentWindow!, iframe.contentWindow!));
  iframe.srcdoc =
    embedding === 'document'
      ? html
      : `<!doctype html><html><head><meta charset="utf-8"></head><body><div class="host-frame">${html}</div></body></html>`;
};
