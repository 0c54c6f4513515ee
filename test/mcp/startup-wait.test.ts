/**
 * A server started while Temporal is out of reach (a replica restarted during a network fault) waits for it, with
 * MCP_TEMPORAL_STARTUP_WAIT_MS, and serves once Temporal answers; without it, it stops at once with the error.
 */
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { ROOT, freePort } from '../helpers/dev-server';
import { mcp2026Request } from '../helpers/mcp2026';
import { runServeToExit, serverEnv } from '../helpers/processes';
import { testAddress, uniqueTaskQueue } from '../helpers/temporal';
import { pollUntil } from '../../src/util/wait';

/** A TCP relay on `port` to the run's dev server: Temporal becomes reachable at `port` once it starts. */
function relayTo(port: number): Promise<net.Server> {
  const [host, target] = testAddress().split(':');
  const server = net.createServer((socket) => {
    const upstream = net.connect(Number(target), host);
    socket.pipe(upstream).pipe(socket);
    const close = () => {
      socket.destroy();
      upstream.destroy();
    };
    socket.on('error', close);
    upstream.on('error', close);
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

test('MCP_TEMPORAL_STARTUP_WAIT_MS: the server waits for an unreachable Temporal and serves once it answers', async () => {
  const temporalPort = await freePort();
  const httpPort = await freePort();
  const env = serverEnv(uniqueTaskQueue('startup-wait'), {
    TEMPORAL_ADDRESS: `127.0.0.1:${temporalPort}`,
    MCP_TEMPORAL_STARTUP_WAIT_MS: '300000',
  });
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'src', 'mcp', 'serve', 'main.ts'), '--http', `127.0.0.1:${httpPort}`],
    {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  let relay: net.Server | undefined;
  try {
    await pollUntil(() => (/waiting for it up to 300000 ms/.test(stderr) ? true : undefined), {
      timeoutMs: 120_000,
      what: () => `the server to say it waits for Temporal:\n${stderr}`,
    });
    expect(child.exitCode).toBeNull();
    relay = await relayTo(temporalPort);
    await pollUntil(() => (/MCP Streamable HTTP on/.test(stderr) ? true : undefined), {
      timeoutMs: 120_000,
      what: () => `the server to serve once Temporal answers:\n${stderr}`,
    });
    const listed = await mcp2026Request(`http://127.0.0.1:${httpPort}/mcp`, 'tools/list', {});
    expect(listed.body.result?.tools).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'task_status' })]));
  } finally {
    child.kill('SIGKILL');
    relay?.close();
  }
}, 300_000);

test('without it, a server that cannot reach Temporal stops at once and says so', async () => {
  const stopped = await runServeToExit(uniqueTaskQueue('startup-wait'), ['--http', `127.0.0.1:${await freePort()}`], {
    TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}`,
  });
  expect(stopped.code).not.toBe(0);
  expect(stopped.stderr).toMatch(/cannot reach Temporal at 127\.0\.0\.1:\d+/);
  expect(stopped.stderr).not.toMatch(/waiting for it/);
});
