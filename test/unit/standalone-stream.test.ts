import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { standaloneStreamOf } from '../../src/mcp/mcp2025/standalone-stream';

describe('the standalone stream of a 2025-11-25 connection', () => {
  test('a duplex transport (stdio, in memory) is its own stream', () => {
    const [transport] = InMemoryTransport.createLinkedPair();
    expect(standaloneStreamOf(transport)).toBe(transport);
    expect(standaloneStreamOf(undefined)).toBeUndefined();
  });

  test("Streamable HTTP: none until the client's GET stream is open, that stream while it is, none once it closed", async () => {
    // The SDK's session transport wraps the web-standard one: neither holds a stream before a GET.
    expect(standaloneStreamOf(new StreamableHTTPServerTransport({ sessionIdGenerator: undefined }))).toBeUndefined();
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    expect(standaloneStreamOf(transport)).toBeUndefined();
    const response = await transport.handleRequest(
      new Request('http://127.0.0.1/mcp', {
        method: 'GET',
        headers: { accept: 'text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      }),
    );
    expect(response.status).toBe(200);
    const stream = standaloneStreamOf(transport);
    expect(stream).toBeDefined();
    expect(standaloneStreamOf(transport)).toBe(stream);
    await response.body!.cancel();
    expect(standaloneStreamOf(transport)).toBeUndefined();
  });
});
