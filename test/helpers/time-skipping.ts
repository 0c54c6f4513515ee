/**
 * Temporal's time-skipping test server, for tests of durable timers that must not wait for them: the server the Java
 * SDK publishes (`io.temporal:temporal-test-server`), fetched once with Maven into the tool cache beside the built
 * Temporal CLI, and started by the TypeScript SDK's `TestWorkflowEnvironment.createTimeSkipping` through a launcher.
 */
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { aptInstall } from '../../scripts/lib/apt';
import { toolCacheDir } from '../../scripts/lib/tool-cache';

/** The test server's version: the one the Java SDK of the TypeScript SDK's generation ships. */
export const TEST_SERVER_VERSION = '1.31.0';

/**
 * The launcher of the time-skipping test server: `<launcher> <port> [--enable-time-skipping]`, as the SDK starts it.
 * The first call fetches the server and its libraries with Maven (45 MB, once), installing Debian's `maven` (with a
 * Java runtime) first if `mvn` or `java` is missing.
 */
export async function timeSkippingServer(): Promise<string> {
  const home = path.join(toolCacheDir(), `temporal-test-server-${TEST_SERVER_VERSION}`);
  const launcher = path.join(home, 'temporal-test-server');
  if (existsSync(launcher)) return launcher;
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
  const lib = path.join(home, 'lib');
  await promisify(execFile)('mvn', ['-q', '-B', 'dependency:copy-dependencies', `-DoutputDirectory=${lib}`], {
    cwd: home,
    timeout: 10 * 60_000,
    maxBuffer: 16 * 1024 * 1024,
  }).catch((error: Error & { stdout?: string }) => {
    throw new Error(`fetching Temporal's test server ${TEST_SERVER_VERSION} with Maven failed: ${error.stdout ?? ''}${error.message}`);
  });
  if (!readdirSync(lib).some((jar) => jar.startsWith('temporal-test-server-'))) throw new Error(`Maven left no test server in ${lib}`);
  // Written last: its presence says the cache is whole.
  const script = `${launcher}.partial`;
  writeFileSync(script, `#!/bin/sh\nexec java -cp '${lib}/*' io.temporal.testserver.TestServer "$@"\n`);
  chmodSync(script, 0o755);
  renameSync(script, launcher);
  return launcher;
}
