/**
 * OAuth 2.1 on the HTTP endpoint, as the MCP authorization specification asks of a resource server: real `serve
 * --http` processes, a local issuer (test/helpers/issuer.ts) that publishes its metadata and keys and signs tokens,
 * and the MCP TypeScript SDK v1 client, both with a fixed Authorization header and with its own OAuth discovery.
 */
import { spawn } from 'node:child_process';
import { discoverOAuthServerInfo, extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateTaskResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { answer, ApprovalClients, awaitInInbox, inbox, textOf } from '../helpers/approvals';
import { freePort, ROOT } from '../helpers/dev-server';
import { startStack } from '../helpers/test-stack';
import { askInput, FIXTURES, startAskTask, type FixtureStack } from '../fixtures/stack';
import { askRequesterTool, requestDecisionTool } from '../fixtures/tools';
import { TestIssuer, type Claims } from '../helpers/issuer';
import { APPROVE, connectOverHttp, getTask, newMcpClient, taskResult } from '../helpers/mcp';
import { serverEnv } from '../helpers/processes';

const SCOPE = 'mcp:tasks';
const STATIC_TOKEN = 'carol-static-token-0123456789';
const TASKS = 'io.modelcontextprotocol/tasks';

let issuer: TestIssuer;
/** Its server: OAuth with a required scope and the default principal claim, next to a static token; the resource as bound. */
let stack: FixtureStack;
let prmUrl: string;
const clients: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  issuer = await TestIssuer.start();
  stack = await startStack({
    name: 'oauth',
    app: FIXTURES,
    servers: [{ env: { MCP_OAUTH_ISSUER: issuer.url, MCP_OAUTH_SCOPES: SCOPE, MCP_AUTH_TOKENS: `carol=${STATIC_TOKEN}` } }],
  });
  prmUrl = stack.server.url.replace('/mcp', '/.well-known/oauth-protected-resource/mcp');
}, 120_000);

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => undefined)));
});

afterAll(async () => {
  await stack?.stop();
  await issuer?.close();
});

/** A token of the issuer for the main server: audience, subject and scope unless `claims` say otherwise. */
function tokenFor(sub: string, claims: Claims = {}): Promise<string> {
  return issuer.token({ sub, aud: stack.server.url, scope: SCOPE, ...claims });
}

/** A v1 SDK client on `url` sending `Authorization: Bearer <token>`. */
async function connect(url: string, token: string) {
  const { client } = await connectOverHttp(url, 'oauth-test', { answer: () => APPROVE, token });
  clients.push(client);
  return client;
}

/** A 2025-11-25 initialize written by hand, with `authorization` as given. */
async function initialize(url: string, authorization?: string) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(authorization && { authorization }),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
  const text = await response.text();
  return { response, text, challenge: response.headers.get('www-authenticate') ?? '' };
}

/** One stateless 2026-07-28 request written by hand. */
async function mcp2026Rpc(url: string, method: string, params: Record<string, unknown>, token?: string) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(typeof params.taskId === 'string' && { 'mcp-name': params.taskId }),
      ...(typeof params.name === 'string' && { 'mcp-name': params.name }),
      ...(token && { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} }, extensions: { [TASKS]: {} } },
        },
      },
    }),
  });
  const text = await response.text();
  const data = text.startsWith('{')
    ? text
    : text
        .split('\n')
        .find((line) => line.startsWith('data: '))!
        .slice(6);
  return { status: response.status, challenge: response.headers.get('www-authenticate'), body: JSON.parse(data) };
}

/** The error a tasks/get by `client` rejects with. */
async function getTaskError(client: Awaited<ReturnType<typeof connect>>, taskId: string): Promise<McpError> {
  const error = await getTask(client, taskId).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

describe('discovery', () => {
  test('no token: 401 with a challenge naming the Protected Resource Metadata and the scope, and no error code', async () => {
    const { response, text, challenge } = await initialize(stack.server.url);
    expect(response.status).toBe(401);
    expect(challenge).toBe(`Bearer resource_metadata="${prmUrl}", scope="${SCOPE}"`);
    expect(JSON.parse(text)).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32001, message: expect.stringMatching(/^Unauthorized/) },
    });
    // Another scheme is no bearer credential either.
    expect((await initialize(stack.server.url, `Basic ${Buffer.from('a:b').toString('base64')}`)).challenge).toBe(challenge);
  });

  test('the Protected Resource Metadata names this resource, the issuer and the scope, at both well-known paths, GET only', async () => {
    const expected = {
      resource: stack.server.url,
      authorization_servers: [issuer.url],
      scopes_supported: [SCOPE],
      bearer_methods_supported: ['header'],
      resource_name: expect.any(String),
    };
    for (const url of [prmUrl, stack.server.url.replace('/mcp', '/.well-known/oauth-protected-resource')]) {
      const response = await fetch(url);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await response.json()).toEqual(expected);
    }
    const post = await fetch(prmUrl, { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
    await post.body?.cancel();
  });

  test('the SDK v1 client finds the issuer and its metadata from the 401 alone', async () => {
    const { response } = await initialize(stack.server.url);
    const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(response);
    expect(resourceMetadataUrl?.href).toBe(prmUrl);
    expect(scope).toBe(SCOPE);
    const found = await discoverOAuthServerInfo(stack.server.url, { resourceMetadataUrl });
    expect(found.authorizationServerUrl).toBe(issuer.url);
    expect(found.resourceMetadata?.resource).toBe(stack.server.url);
    expect(found.authorizationServerMetadata).toMatchObject({ issuer: issuer.url, jwks_uri: issuer.jwksUrl });
  });

  test('the SDK v1 client with client credentials discovers the issuer, gets a token for this resource (RFC 8707) and connects', async () => {
    const { clientId, clientSecret } = issuer.registerClient('reporting-bot');
    const client = newMcpClient('oauth-client-credentials');
    const authProvider = new ClientCredentialsProvider({ clientId, clientSecret, scope: SCOPE, expectedIssuer: issuer.url });
    await client.connect(new StreamableHTTPClientTransport(new URL(stack.server.url), { authProvider }));
    clients.push(client);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain(askRequesterTool.name);
    const token = authProvider.tokens()!.access_token;
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ iss: issuer.url, aud: stack.server.url, sub: 'reporting-bot', scope: SCOPE });
  });
});

describe('tasks belong to the token’s principal', () => {
  test('a valid token creates a task; a token of another subject gets -32602 Task not found; a static token still works', async () => {
    const alice = await connect(stack.server.url, await tokenFor('alice'));
    const task = await startAskTask(alice);
    expect((await getTask(alice, task.taskId)).taskId).toBe(task.taskId);

    const bob = await connect(stack.server.url, await tokenFor('bob'));
    const refused = await getTaskError(bob, task.taskId);
    expect(refused.code).toBe(ErrorCode.InvalidParams);
    expect(refused.message).toMatch(/Task not found/);
    expect((await bob.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).not.toContain(task.taskId);

    // A configured static token is accepted next to OAuth, as its own principal.
    const carol = await connect(stack.server.url, STATIC_TOKEN);
    expect((await getTaskError(carol, task.taskId)).code).toBe(ErrorCode.InvalidParams);

    // A JWT whose subject is the static token's principal is another principal (oauth:carol): it sees none of carol's
    // tasks. So is one whose subject names a local principal: OAuth principals have a name space of their own.
    const carolsTask = await startAskTask(carol);
    const jwtCarol = await connect(stack.server.url, await tokenFor('carol'));
    expect((await getTaskError(jwtCarol, carolsTask.taskId)).code).toBe(ErrorCode.InvalidParams);
    expect((await jwtCarol.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).not.toContain(carolsTask.taskId);
    await carol.experimental.tasks.cancelTask(carolsTask.taskId);

    // A new token of the same subject, in a new session, finishes the task.
    const again = await connect(stack.server.url, await tokenFor('alice'));
    expect((await taskResult(again, task.taskId)).structuredContent).toMatchObject({ outcome: 'approved' });
  });

  test('2026-07-28: a valid token creates and reads a task, another subject gets -32602, no token gets 401', async () => {
    const alice = await tokenFor('alice');
    const created = await mcp2026Rpc(stack.server.url, 'tools/call', { name: askRequesterTool.name, arguments: askInput() }, alice);
    expect(created.status).toBe(200);
    expect(created.body.result).toMatchObject({ resultType: 'task', taskId: expect.any(String) });
    const { taskId } = created.body.result as { taskId: string };
    expect((await mcp2026Rpc(stack.server.url, 'tasks/get', { taskId }, alice)).body.result).toMatchObject({ taskId });
    const bob = await mcp2026Rpc(stack.server.url, 'tasks/get', { taskId }, await tokenFor('bob'));
    expect(bob.body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/Task not found/) });

    const anonymous = await mcp2026Rpc(stack.server.url, 'tasks/get', { taskId });
    expect(anonymous.status).toBe(401);
    expect(anonymous.challenge).toBe(`Bearer resource_metadata="${prmUrl}", scope="${SCOPE}"`);
    // 2026-07-28 reserves -32000 … -32019 for earlier servers: a refused credential is -32600 there.
    expect(anonymous.body.error).toMatchObject({ code: -32600, message: expect.stringMatching(/^Unauthorized/) });
    await mcp2026Rpc(stack.server.url, 'tasks/cancel', { taskId }, alice);
  });
});

describe('refused tokens', () => {
  const cases: [string, () => Promise<string>, RegExp][] = [
    ['an audience of another resource', () => tokenFor('alice', { aud: 'https://other.example.com/mcp' }), /not for this resource/],
    ['no audience', () => tokenFor('alice', { aud: undefined }), /audience|aud claim/],
    ['another issuer', () => tokenFor('alice', { iss: 'https://evil.example.com' }), /not issued by/],
    ['an expired token', () => tokenFor('alice', { exp: Math.floor(Date.now() / 1000) - 120 }), /expired/],
    ['a token not valid yet', () => tokenFor('alice', { nbf: Math.floor(Date.now() / 1000) + 600 }), /not valid yet/],
    ['a token without exp', () => tokenFor('alice', { exp: undefined }), /exp claim is missing/],
    [
      'a key not in the key set',
      () => issuer.token({ sub: 'alice', aud: stack.server.url, scope: SCOPE }, 'stranger'),
      /not signed by a key of/,
    ],
    [
      'another key under the issuer’s key id',
      () => issuer.token({ sub: 'alice', aud: stack.server.url, scope: SCOPE }, 'impostor'),
      /signature/,
    ],
    ['alg none', async () => issuer.unsigned({ sub: 'alice', aud: stack.server.url, scope: SCOPE }), /algorithm/],
    ['a token that is no JWT', async () => 'not-a-jwt-0123456789abcdef', /not a well-formed JWT/],
    ['no subject', () => tokenFor('alice', { sub: undefined }), /sub claim is missing/],
    ['a subject that is no usable principal', () => tokenFor('alice smith'), /not a usable principal/],
  ];

  test.each(cases)('%s: 401 invalid_token with a description and the metadata URL, and the token is never echoed', async (_, make, why) => {
    const token = await make();
    const { response, text, challenge } = await initialize(stack.server.url, `Bearer ${token}`);
    expect(response.status).toBe(401);
    expect(challenge).toMatch(/^Bearer error="invalid_token", error_description="[^"]+"/);
    expect(challenge).toContain(`resource_metadata="${prmUrl}"`);
    const description = /error_description="([^"]+)"/.exec(challenge)![1];
    expect(description).toMatch(why);
    expect(JSON.parse(text).error).toEqual({ code: -32001, message: `Unauthorized: ${description}` });
    expect(text).not.toContain(token);
    expect(challenge).not.toContain(token);
  });

  test('a valid token without the required scope: 403 insufficient_scope naming the scope', async () => {
    const { response, text, challenge } = await initialize(stack.server.url, `Bearer ${await tokenFor('alice', { scope: 'profile' })}`);
    expect(response.status).toBe(403);
    expect(challenge).toMatch(/^Bearer error="insufficient_scope", error_description="[^"]*mcp:tasks[^"]*"/);
    expect(challenge).toContain(`scope="${SCOPE}"`);
    expect(challenge).toContain(`resource_metadata="${prmUrl}"`);
    expect(JSON.parse(text).error).toMatchObject({ code: -32001, message: expect.stringMatching(/^Forbidden: .*mcp:tasks/) });
    // Scopes may also come as an `scp` array.
    const scp = await initialize(stack.server.url, `Bearer ${await tokenFor('alice', { scope: undefined, scp: ['profile', SCOPE] })}`);
    expect(scp.response.status).toBe(200);
  });
});

describe('roles from the access token', () => {
  test('MCP_OAUTH_ROLES_CLAIM: the claim (a list or a space-separated string) gives the roles approvals are addressed to', async () => {
    const withRoles = await stack.spawnServer({
      env: { MCP_OAUTH_ISSUER: issuer.url, MCP_OAUTH_ROLES_CLAIM: 'groups', MCP_TASK_OPS_PER_SECOND: '0' },
    });
    const approvals = new ApprovalClients();
    const as = async (sub: string, groups: unknown) => {
      const token = await issuer.token({ sub, aud: withRoles.url, ...(groups !== undefined && { groups }) });
      return approvals.connect(withRoles.url, { principal: `oauth:${sub}`, token, roles: '' });
    };
    try {
      const [alice, bob, carol] = await Promise.all([
        as('alice', ['spend-approver']),
        as('bob', 'spend-approver auditor'),
        as('carol', undefined),
      ]);
      const created = await alice.request(
        {
          method: 'tools/call',
          params: { name: requestDecisionTool.name, arguments: { subject: 'books', roles: ['spend-approver'] }, task: {} },
        },
        CreateTaskResultSchema,
      );
      const { taskId } = created.task;
      await awaitInInbox(bob, taskId);
      expect((await inbox(carol)).some((item) => item.taskId === taskId)).toBe(false);
      expect(textOf(await answer(carol, taskId, 'approve'))).toBe(
        `No question "approval" of task ${taskId} awaits your answer. Nothing was recorded.`,
      );
      expect(textOf(await answer(alice, taskId, 'approve'))).toBe(
        'This is your own request: someone else must approve it. Nothing was recorded.',
      );
      // A role claimed in the arguments is not a role.
      expect((await answer(carol, taskId, 'approve', { roles: ['spend-approver'] })).isError).toBe(true);
      expect((await answer(bob, taskId, 'approve')).isError).toBeFalsy();
      const result = await taskResult(alice, taskId);
      expect(result.structuredContent).toMatchObject({
        approved: true,
        approvers: [{ principal: 'oauth:bob', roles: ['spend-approver', 'auditor'], decision: 'approve' }],
      });
    } finally {
      await approvals.closeAll();
    }
  });
});

describe('configuration', () => {
  test('MCP_OAUTH_PRINCIPAL_CLAIM names the principal; MCP_OAUTH_RESOURCE and MCP_OAUTH_JWKS_URL are used as given', async () => {
    const resource = 'https://mcp.example.test/mcp';
    const custom = await stack.spawnServer({
      env: {
        MCP_OAUTH_ISSUER: issuer.url,
        MCP_OAUTH_JWKS_URL: issuer.jwksUrl,
        MCP_OAUTH_RESOURCE: resource,
        MCP_OAUTH_PRINCIPAL_CLAIM: 'email',
      },
    });
    const token = (claims: Claims) => issuer.token({ aud: resource, ...claims });

    // The challenge points at the public URL; the document is served here too.
    const missing = await initialize(custom.url);
    expect(missing.challenge).toBe('Bearer resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp"');
    const metadata = (await (await fetch(custom.url.replace('/mcp', '/.well-known/oauth-protected-resource/mcp'))).json()) as Record<
      string,
      unknown
    >;
    expect(metadata).toMatchObject({ resource, authorization_servers: [issuer.url] });
    expect(metadata.scopes_supported).toBeUndefined();

    const dana = await connect(custom.url, await token({ sub: 'device-1', email: 'dana@example.com' }));
    const task = await startAskTask(dana);
    // Same email, another subject: the same principal.
    const danaElsewhere = await connect(custom.url, await token({ sub: 'device-2', email: 'dana@example.com' }));
    expect((await getTask(danaElsewhere, task.taskId)).taskId).toBe(task.taskId);
    // Same subject, another email: another principal.
    const erin = await connect(custom.url, await token({ sub: 'device-1', email: 'erin@example.com' }));
    expect((await getTaskError(erin, task.taskId)).code).toBe(ErrorCode.InvalidParams);

    const noEmail = await initialize(custom.url, `Bearer ${await token({ sub: 'device-3' })}`);
    expect(noEmail.response.status).toBe(401);
    expect(noEmail.challenge).toContain('error_description="the token\'s email claim is missing"');
    // A token for the address the server is bound to is not for the configured resource.
    const local = await initialize(custom.url, `Bearer ${await issuer.token({ aud: custom.url, email: 'dana@example.com' })}`);
    expect(local.challenge).toMatch(/error="invalid_token", error_description="the token is not for this resource/);
    await danaElsewhere.experimental.tasks.cancelTask(task.taskId);
  });

  test('with OAuth (and MCP_ALLOWED_HOSTS), serve listens on a non-loopback address without --no-auth; an unreachable issuer is a 503, not a 401', async () => {
    const closedPort = await freePort();
    const open = await stack.spawnServer({
      env: { MCP_OAUTH_ISSUER: `http://127.0.0.1:${closedPort}`, MCP_ALLOWED_HOSTS: '127.0.0.1,0.0.0.0' },
      host: '0.0.0.0',
    });
    const url = open.url.replace('0.0.0.0', '127.0.0.1');
    expect((await initialize(url)).response.status).toBe(401);
    const token = await issuer.token({ sub: 'alice', aud: open.url });
    const unavailable = await initialize(url, `Bearer ${token}`);
    expect(unavailable.response.status).toBe(503);
    expect(JSON.parse(unavailable.text).error.message).toMatch(/signing keys .* cannot be fetched/);
    expect(unavailable.text).not.toContain(token);
  });

  test('serve refuses OAuth settings it cannot use, naming the variable', async () => {
    const run = (args: string[], env: Record<string, string>) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn('npm', ['run', '-s', 'serve', '--', ...args], { cwd: ROOT, env: serverEnv(stack.taskQueue, env) });
        let stderr = '';
        child.stderr.on('data', (chunk) => (stderr += chunk));
        child.once('exit', (code) => resolve({ code, stderr }));
      });
    const results = await Promise.all([
      run(['--http', '127.0.0.1:0'], { MCP_OAUTH_ISSUER: 'http://issuer.example.com' }),
      run(['--http', '127.0.0.1:0'], { MCP_OAUTH_SCOPES: SCOPE }),
      run(['--http', '127.0.0.1:0'], { MCP_OAUTH_ISSUER: issuer.url, MCP_OAUTH_RESOURCE: 'mcp.example.com/mcp' }),
      run(['--http', '0.0.0.0:0', '--no-auth'], { MCP_OAUTH_ISSUER: issuer.url }),
    ]);
    expect(results.map((result) => result.code)).toEqual([2, 2, 2, 2]);
    expect(results[0].stderr).toMatch(/MCP_OAUTH_ISSUER http:\/\/issuer\.example\.com: .*HTTPS/);
    expect(results[1].stderr).toMatch(/MCP_OAUTH_SCOPES is set but MCP_OAUTH_ISSUER is not/);
    expect(results[2].stderr).toMatch(/MCP_OAUTH_RESOURCE: .* is not an absolute URL/);
    expect(results[3].stderr).toMatch(/--no-auth contradicts the configured MCP_OAUTH_ISSUER/);
  });
});
