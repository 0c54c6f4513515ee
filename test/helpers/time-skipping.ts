/**
 * Temporal's time-skipping test server, for tests of durable timers that must not wait for them: the server the Java
 * SDK publishes (`io.temporal:temporal-test-server`), fetched once with Maven into the tool cache beside the built
 * Temporal CLI, and started by the TypeScript SDK's `TestWorkflowEnvironment.createTimeSkipping` through a launcher.
 */
import { execFile, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { aptInstall } from '../../scripts/lib/apt';
import { toolCacheDir } from '../../scripts/lib/tool-cache';
import { pollUntil, sleep } from '../../src/util/wait';

/** The test server's version: the one the Java SDK of the TypeScript SDK's generation ships. */
export const TEST_SERVER_VERSION = '1.31.0';

/**
 * The launcher of the time-skipping test server: `<launcher> <port> [--enable-time-skipping]`, as the SDK starts it.
 * The first call fetches the server and its libraries with Maven (45 MB, once), installing Debian's `maven` (with a
 * Java runtime) first if `mvn` or `java` is missing, and archives the server's classes for quick starts.
 */
export async function timeSkippingServer(): Promise<string> {
  const home = path.join(toolCacheDir(), `temporal-test-server-${TEST_SERVER_VERSION}`);
  const launcher = path.join(home, 'launch-test-server');
  if (existsSync(launcher)) return launcher;
  const lib = path.join(home, 'lib');
  if (!existsSync(lib) || !readdirSync(lib).some((jar) => jar.startsWith('temporal-test-server-'))) await fetchServer(home, lib);
  const java = `java -XX:TieredStopAtLevel=1 -cp '${lib}/*'`;
  const archive = path.join(home, 'classes.jsa');
  await archiveClasses(`${java} -XX:ArchiveClassesAtExit='${archive}'`).catch((error: Error) => {
    process.stderr.write(`[test] the test server's class archive was not made (${error.message}); it starts without one\n`);
  });
  // The SDK gives the server 5 s to answer; a JVM loading its classes anew can take most of that on a busy machine,
  // and with the archive of the server's own classes (AppCDS) and the quick compiler it answers in about a second.
  const shared = existsSync(archive) ? ` -XX:SharedArchiveFile='${archive}'` : '';
  // Written last: its presence says the cache is whole.
  const script = `${launcher}.partial`;
  writeFileSync(script, `#!/bin/sh\nexec ${java}${shared} io.temporal.testserver.TestServer "$@"\n`);
  chmodSync(script, 0o755);
  renameSync(script, launcher);
  return launcher;
}

/** Fetches the test server and its libraries into `lib` with Maven (installing Debian's `maven` first if need be). */
async function fetchServer(home: string, lib: string): Promise<void> {
  await aptInstall('maven', 'command -v mvn >/dev/null && command -v java >/dev/null');
  mkdirSync(home, { recursive: true });
  writeFileSync(
    path.join(home, 'pom.xml'),
    `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.temporal-mcp</groupId>
  <artifactId>temporal-test-server-launcher</artifactId>
  <version>1</version>
  <dependencies>
    <dependency>
      <groupId>io.temporal</groupId>
      <artifactId>temporal-test-server</artifactId>
      <version>${TEST_SERVER_VERSION}</version>
    </dependency>
  </dependencies>
</project>
`,
  );
  // The jars are copied into the cache: the launcher needs nothing of Maven's own repository once they are there.
  await promisify(execFile)('mvn', ['-q', '-B', 'dependency:copy-dependencies', `-DoutputDirectory=${lib}`], {
    cwd: home,
    timeout: 10 * 60_000,
    maxBuffer: 16 * 1024 * 1024,
  }).catch((error: Error & { stdout?: string }) => {
    throw new Error(`fetching Temporal's test server ${TEST_SERVER_VERSION} with Maven failed: ${error.stdout ?? ''}${error.message}`);
  });
  if (!readdirSync(lib).some((jar) => jar.startsWith('temporal-test-server-'))) throw new Error(`Maven left no test server in ${lib}`);
}

/**
 * Runs the server once with `java` (which names the archive to write at exit) until it listens, then stops it with
 * SIGTERM, on which the JVM writes the archive. Rejects when it does not listen within two minutes.
 */
async function archiveClasses(java: string): Promise<void> {
  const port = await new Promise<number>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address() as AddressInfo;
      probe.close(() => resolve(free));
    });
  });
  const server = spawn('sh', ['-c', `exec ${java} io.temporal.testserver.TestServer ${port}`], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  try {
    await pollUntil(
      () =>
        new Promise<true | undefined>((resolve) => {
          const socket = connect(port, '127.0.0.1', () => {
            socket.destroy();
            resolve(true);
          });
          socket.once('error', () => resolve(undefined));
        }),
      { timeoutMs: 120_000, intervalMs: 100, what: 'the test server to listen, for its class archive' },
    );
    // Its classes for answering are loaded too once it has taken a connection; a moment more, then exit.
    await sleep(1_000);
  } finally {
    server.kill('SIGTERM');
    await exited;
  }
}
