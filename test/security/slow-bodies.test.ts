/**
 * One token holder cannot shut other clients out with requests that never finish: bodies sent a byte at a time are
 * closed at the connection cap for a new connection once they have trickled past a second, and one principal has at
 * most so many requests under way (one more gets 429 at once, before its body is read).
 */
import net from 'node:net';
import { httpLimitsFromEnv, type HttpLimits } from '../../src/mcp/transports/limits';
import { startHttpServer, type RunningHttpServer } from '../../src/mcp/transports/http';
import { createAuthenticator } from '../../src/mcp/transports/oauth';
import { tokensFromEnv } from '../../src/mcp/transports/auth';
import { pollUntil, sleep } from '../../src/util/wait';
import { freePort } from '../helpers/dev-server';
import { startStack, type TestStack } from '../helpers/test-stack';

const TOKENS = { mallory: 'mallory-token-slow-bodies', alice: 'alice-token-slow-bodies' };

let stack: TestStack;
/** Requests of mallory's that reached a server (headers read). */
let malloryRequests = 0;
const servers: RunningHttpServer[] = [];
const sockets: net.Socket[] = [];

beforeAll(async () => {
  stack = await startStack({ name: 'slow-bodies', worker: false, bridge: true });
}, 60_000);

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all(servers.map((server) => server.close(1_000)));
  await stack?.stop();
});

async function serve(limits: Partial<HttpLimits>): Promise<RunningHttpServer> {
  const tokens = tokensFromEnv({ MCP_AUTH_TOKENS: `mallory=${TOKENS.mallory},alice=${TOKENS.alice}` });
  const server = await startHttpServer({
    host: '127.0.0.1',
    port: await freePort(),
    endpoints: stack.bridge,
    // A request may take two minutes to arrive: Node's own timeout never rescues the client here.
    limits: { ...httpLimitsFromEnv({}), requestTimeoutMs: 120_000, headersTimeoutMs: 60_000, ...limits },
    authenticator: (endpointUrl) => {
      const inner = createAuthenticator({ tokens, endpointUrl });
      // Counts the requests the server has taken in (their headers read), so the test knows every place is held.
      return {
        publicAnswer: (method, pathname) => inner.publicAnswer(method, pathname),
        authenticate: (req) => {
          if (req.headers.authorization === `Bearer ${TOKENS.mallory}`) malloryRequests++;
          return inner.authenticate(req);
        },
      };
    },
  });
  servers.push(server);
  return server;
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'slow-bodies', version: '1.0.0' } },
});

/** A request of `who` that sends its headers and then its body a byte every 500 ms, never all of it. */
function trickle(url: string, who: keyof typeof TOKENS): net.Socket {
  const { port } = new URL(url);
  const socket = net.connect(Number(port), '127.0.0.1');
  sockets.push(socket);
  socket.on('error', () => undefined);
  socket.resume();
  socket.write(
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKENS[who]}\r\n` +
      `Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${INITIALIZE.length}\r\n\r\n`,
  );
  let sent = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || sent >= INITIALIZE.length - 1) return clearInterval(timer);
    socket.write(INITIALIZE[sent++]);
  }, 500);
  socket.once('close', () => clearInterval(timer));
  return socket;
}

/** A whole initialize of `who`; its HTTP status, or the network error's code. */
async function initialize(url: string, who: keyof typeof TOKENS): Promise<number | string> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TOKENS[who]}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: INITIALIZE,
    });
    await response.arrayBuffer();
    return response.status;
  } catch (error) {
    return ((error as Error & { cause?: { code?: string } }).cause?.code ?? (error as Error).message) as string;
  }
}

test('at the connection cap, bodies trickling in a byte at a time give way to a new client', async () => {
  const server = await serve({ maxConnections: 16, maxConnectionsPerAddress: 0, maxRequestsPerPrincipal: 0 });
  malloryRequests = 0;
  const held = Array.from({ length: 16 }, () => trickle(server.url, 'mallory'));
  // Every place is taken by a request whose body is still arriving ...
  await pollUntil(() => (malloryRequests === held.length ? true : undefined), {
    timeoutMs: 10_000,
    intervalMs: 50,
    what: () => `the server to take in all ${held.length} trickling requests (${malloryRequests} so far)`,
  });
  // ... and alice still gets in, once those bodies have trickled for a second: the slowest gives her its place.
  let last: number | string = '';
  const status = await pollUntil(
    async () => {
      last = await initialize(server.url, 'alice');
      return last === 200 ? last : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 250, what: () => `alice's initialize to be served (last: ${last})` },
  );
  expect(status).toBe(200);
  expect(held.filter((socket) => socket.destroyed).length).toBeGreaterThan(0);
});

test("one principal's requests under way are bounded: one more is 429 at once, another principal is served", async () => {
  const server = await serve({ maxRequestsPerPrincipal: 4, maxConnectionsPerAddress: 0 });
  for (let i = 0; i < 4; i++) trickle(server.url, 'mallory');
  let last: number | string = '';
  await pollUntil(
    async () => {
      last = await initialize(server.url, 'mallory');
      return last === 429 ? last : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 100, what: () => `mallory's fifth request to be refused (last: ${last})` },
  );
  const refused = await fetch(server.url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${TOKENS.mallory}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: INITIALIZE,
  });
  expect(refused.status).toBe(429);
  expect(refused.headers.get('retry-after')).toBe('1');
  expect(await refused.json()).toMatchObject({
    error: { code: -32000, message: expect.stringMatching(/^Too many requests: 4 requests of this principal/) },
  });
  // A 2026-07-28 request is refused with the codes its text gives: -32603, retryable, never the legacy -32000.
  const modern = await fetch(server.url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${TOKENS.mallory}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'server/discover',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'server/discover', params: {} }),
  });
  expect(modern.status).toBe(429);
  expect(await modern.json()).toMatchObject({
    error: { code: -32603, message: expect.stringMatching(/^Too many requests/), data: { retryable: true, retryAfterMs: 1000 } },
  });
  expect(await initialize(server.url, 'alice')).toBe(200);
  // Her requests ended, mallory is served again.
  for (const socket of sockets) socket.destroy();
  await pollUntil(async () => ((await initialize(server.url, 'mallory')) === 200 ? true : undefined), {
    timeoutMs: 30_000,
    intervalMs: 100,
    what: "mallory's requests to be counted out once they ended",
  });
});

/**
 * A request of `who` that sends its headers and `sent` bytes of a body of `declared` bytes, and withholds the rest; the
 * status it gets, if any, once the socket closes or the server answers.
 */
function withhold(
  url: string,
  who: keyof typeof TOKENS,
  declared: number,
  sent: number,
): { socket: net.Socket; status: Promise<number | undefined> } {
  const { port } = new URL(url);
  const socket = net.connect(Number(port), '127.0.0.1');
  sockets.push(socket);
  socket.on('error', () => undefined);
  let answer = '';
  const status = new Promise<number | undefined>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
      const match = /^HTTP\/1\.1 (\d{3})/.exec(answer);
      if (match) resolve(Number(match[1]));
    });
    socket.once('close', () => resolve(undefined));
  });
  socket.write(
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKENS[who]}\r\n` +
      `Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${declared}\r\n\r\n`,
  );
  socket.write(Buffer.alloc(sent, 0x20));
  return { socket, status };
}

test("bytes held for bodies still arriving are bounded per principal and in all: past one's share 429, past the process's 503, others served", async () => {
  const server = await serve({
    maxConnectionsPerAddress: 0,
    maxRequestsPerPrincipal: 0,
    maxBodyBytes: 1024 * 1024,
    maxPendingBodyBytesPerPrincipal: 256 * 1024,
    maxPendingBodyBytes: 300 * 1024,
  });
  // Two bodies of mallory's, 200 KiB of each in and the rest withheld: together they pass her share, so one is 429.
  const bodies = [withhold(server.url, 'mallory', 512 * 1024, 200 * 1024), withhold(server.url, 'mallory', 512 * 1024, 200 * 1024)];
  const refused = await Promise.race(bodies.map((body, index) => body.status.then((status) => ({ index, status }))));
  expect(refused.status).toBe(429);
  const held = bodies[1 - refused.index];
  // Alice, with nothing under way, is served.
  expect(await initialize(server.url, 'alice')).toBe(200);
  // Alice's own share has room for 150 KiB, the process's has not, beside mallory's 200: 503.
  const status = await pollUntil(
    async () => {
      const alices = withhold(server.url, 'alice', 512 * 1024, 150 * 1024);
      const answer = await Promise.race([alices.status, sleep(2_000).then(() => undefined)]);
      alices.socket.destroy();
      return answer;
    },
    { timeoutMs: 30_000, intervalMs: 100, what: "a body of alice's refused while mallory's bytes fill the process's bound" },
  );
  expect(status).toBe(503);
  // The bytes go back when a body ends: mallory's cut off, she is served again.
  held.socket.destroy();
  await pollUntil(async () => ((await initialize(server.url, 'mallory')) === 200 ? true : undefined), {
    timeoutMs: 30_000,
    intervalMs: 100,
    what: "mallory's withheld bytes to be given back once her body was cut off",
  });
});
