/**
 * A workflow's data encrypted in Temporal (MCP_PAYLOAD_KEYS), on a dev server of its own started by ./temporal-dev.sh
 * with the Web UI pointed at the codec server: a whole decision by two approvers, carried out and verified, leaves none
 * of its words in the history, the SQLite file or the decision store; the codec server decodes for an operator (the CLI, the
 * Web UI in Chromium) and for nobody else; keys rotate; a key that is missing is named; a bad keys file stops every
 * process at start.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { Browser } from 'playwright-core';
import type { DecisionInput, DecisionResult } from '../fixtures/definitions';
import { effectsCarriedOut, FIXTURE_WORKER_ARGS, FIXTURES, startDecisionTask, tempFixtureFiles } from '../fixtures/stack';
import { bodyOfPayloads, payloadsOfBody } from '../../src/codec/payload-json';
import { EncryptionCodec } from '../../src/shared/payload-codec';
import { PayloadKeys, readPayloadKeys } from '../../src/shared/payload-keys';
import { readNotifications } from '../../src/activities/notifications';
import { pollUntil } from '../../src/util/wait';
import { answer, ApprovalClients, approvalsCommand, awaitInInbox, makePeople, writeTokensFile } from '../helpers/approvals';
import { launchChromium } from '../helpers/browser';
import { TestIssuer } from '../helpers/issuer';
import { freePort, ROOT, temporalDev } from '../helpers/dev-server';
import { getTask, taskResult } from '../helpers/mcp';
import { runServeToExit, spawnHttpServerOnFreePort, spawnWorker, type HttpServerProcess, type SpawnedProcess } from '../helpers/processes';
import { uniqueTaskQueue } from '../helpers/temporal';

const people = makePeople({ sam: 'ap-approver', ann: 'ap-approver', bob: 'ap-approver', olivia: 'payload-reader' });
const dir = mkdtempSync(path.join(os.tmpdir(), 'payload-keys-'));
const activities = tempFixtureFiles();
const taskQueue = uniqueTaskQueue('payload-encryption');
const clients = new ApprovalClients();
const running: SpawnedProcess[] = [];

let port: number;
let stateDir: string;
let address: string;
let codecUrl: string;
let tokensFile: string;
let cli: string;
let temporal: { client: Client; close(): Promise<void> };

/** A keys file of `keys` (id, then 32 random bytes unless given), mode 600. */
function keysFile(name: string, keys: Array<[string, Buffer?]>, mode = 0o600): string {
  const file = path.join(dir, name);
  writeFileSync(file, `# payload keys\n${keys.map(([id, key]) => `${id} ${(key ?? randomBytes(32)).toString('base64')}`).join('\n')}\n`);
  chmodSync(file, mode);
  return file;
}
const K1 = randomBytes(32);
const K2 = randomBytes(32);
const K3 = randomBytes(32);

/** A worker process of the fixtures on this file's task queue and dev server, encrypting with `keys`. */
async function worker(keys: string): Promise<SpawnedProcess> {
  const spawned = await spawnWorker(
    taskQueue,
    {
      TEMPORAL_ADDRESS: address,
      MCP_PAYLOAD_KEYS: keys,
      MCP_DECISION_STORE: activities.decisionStore,
      NOTIFICATION_OUTBOX: activities.notificationOutbox,
    },
    FIXTURE_WORKER_ARGS,
  );
  running.push(spawned);
  return spawned;
}

/** A `serve --http` process on this file's dev server, encrypting with `keys`. */
async function server(keys: string): Promise<HttpServerProcess> {
  const spawned = await spawnHttpServerOnFreePort(
    taskQueue,
    {
      TEMPORAL_ADDRESS: address,
      MCP_PAYLOAD_KEYS: keys,
      MCP_AUTH_TOKENS_FILE: tokensFile,
      MCP_DECISION_STORE: activities.decisionStore,
      MCP_TASK_OPS_PER_SECOND: '0',
    },
    FIXTURES.serveArgs(),
  );
  running.push(spawned);
  return spawned;
}

/** The codec server as an operator runs it, with `keys`. */
async function codecServer(keys: string, codecPort: number, env: Record<string, string> = {}): Promise<SpawnedProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'codec-server', '--http', `127.0.0.1:${codecPort}`], {
    cwd: ROOT,
    env: {
      ...process.env,
      MCP_PAYLOAD_KEYS: keys,
      MCP_AUTH_TOKENS_FILE: tokensFile,
      MCP_CODEC_UI_ORIGINS: `http://127.0.0.1:${port + 1000}`,
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const spawned: SpawnedProcess = {
    exited,
    stderr: () => stderr,
    kill: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, signal);
      await exited;
    },
  };
  running.push(spawned);
  await pollUntil(
    () => {
      if (child.exitCode !== null) throw new Error(`the codec server exited with ${child.exitCode}:\n${stderr}`);
      return /codec endpoint on/.test(stderr) ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100, what: () => `the codec server to listen:\n${stderr}` },
  );
  return spawned;
}

/**
 * A decision for two approvers whose words appear nowhere else: the test looks for each of them in what Temporal and
 * the store keep.
 */
function secretDecision(): { input: DecisionInput & { details: { order: string; item: string; amount: number } }; comment: string } {
  const tag = randomUUID().slice(0, 8);
  return {
    input: {
      subject: `Quokka standing desks ${tag}`,
      roles: ['ap-approver'],
      required: 2,
      details: { order: `ORD-ZEBRA-${tag}`, item: `Narwhal monitor arms ${tag}`, amount: 4321.87 },
    },
    comment: `Wombat budget line ${tag}`,
  };
}

/** The words of a decision (its subject, its details, the approvers' comment) that must not be stored in the clear. */
function secretsOf(secret: ReturnType<typeof secretDecision>): string[] {
  const { input, comment } = secret;
  return [input.subject, input.details.order, input.details.item, '4321.87', comment];
}

/** `temporal workflow show --output json` of `taskId`, with `extra` flags. */
function show(taskId: string, extra: string[] = []): string {
  return execFileSync(cli, ['workflow', 'show', '--address', address, '--workflow-id', taskId, '--output', 'json', ...extra], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** Everything a text holds, with each base64 string in it decoded beside it: words stored as base64 count as stored. */
function withBase64Decoded(text: string): string {
  const decoded = [...text.matchAll(/"([A-Za-z0-9+/]{16,}={0,2})"/g)].map((match) => Buffer.from(match[1], 'base64').toString('latin1'));
  return `${text}\n${decoded.join('\n')}`;
}

/** The files under `root`, recursively; one gone by the time it is looked at (a database's journal) is left out. */
function filesUnder(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .map((name) => path.join(root, name))
    .filter((file) => stillThere(() => statSync(file).isFile()) === true);
}

/** What `read` returns, or undefined when its file is gone (ENOENT): a running server removes its journal when done. */
function stillThere<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

beforeAll(async () => {
  port = await freePort();
  address = `127.0.0.1:${port}`;
  stateDir = path.join(dir, 'temporal');
  const codecPort = await freePort();
  codecUrl = `http://127.0.0.1:${codecPort}`;
  tokensFile = writeTokensFile(people);
  cli = execFileSync(path.join(ROOT, 'temporal-dev.sh'), ['cli-path'], { encoding: 'utf8' }).trim();
  // The dev server with its Web UI, as ./temporal-dev.sh starts it when payloads are encrypted.
  await temporalDev('start', port, stateDir, {
    TEMPORAL_HEADLESS: '0',
    MCP_PAYLOAD_KEYS: keysFile('keys-k1', [['k1', K1]]),
    TEMPORAL_UI_CODEC_ENDPOINT: codecUrl,
  });
  const connection = await Connection.connect({ address });
  temporal = { client: new Client({ connection }), close: () => connection.close() };
  await codecServer(
    keysFile('keys-codec', [
      ['k2', K2],
      ['k1', K1],
    ]),
    codecPort,
  );
}, 180_000);

afterAll(async () => {
  await clients.closeAll();
  await Promise.all(running.map((process) => process.kill().catch(() => undefined)));
  await temporal?.close();
  await temporalDev('stop', port, stateDir).catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

/** Stops `processes` and forgets them. */
async function stop(...processes: SpawnedProcess[]): Promise<void> {
  await Promise.all(processes.map((process) => process.kill()));
  for (const process of processes) running.splice(running.indexOf(process), 1);
}

describe('with MCP_PAYLOAD_KEYS', () => {
  let browser: Browser | undefined;
  let taskId: string;
  let secret: ReturnType<typeof secretDecision>;

  afterAll(async () => {
    await browser?.close();
  });

  test('a whole decision, two approvers, carried out and verified: its words are in neither the history, the SQLite file, the decision store nor the outbox', async () => {
    const keys = keysFile('keys-1', [['k1', K1]]);
    const [spawnedWorker, spawnedServer] = await Promise.all([worker(keys), server(keys)]);
    const [sam, ann, bob] = await Promise.all(
      [people.sam, people.ann, people.bob].map((person) => clients.connect(spawnedServer.url, person)),
    );
    secret = secretDecision();
    taskId = await startDecisionTask(sam, secret.input);
    // The approvers read the question decoded, through the bridge.
    const entry = await awaitInInbox(ann, taskId);
    expect(entry.message).toContain(`Approve ${secret.input.subject}?`);
    await awaitInInbox(bob, taskId);
    expect((await answer(ann, taskId, 'approve', { comment: secret.comment })).isError).toBeUndefined();
    expect((await answer(bob, taskId, 'approve')).isError).toBeUndefined();
    const result = (await taskResult(sam, taskId)).structuredContent as unknown as DecisionResult;
    expect(result).toMatchObject({ subject: secret.input.subject, outcome: 'approved' });
    expect(await effectsCarriedOut(temporal.client, taskId)).toBe(1);

    // The records verify with the keys; without them the command says which key it needs.
    const store = { MCP_DECISION_STORE: activities.decisionStore };
    const receipt = path.join(dir, 'receipt.json');
    const verified = approvalsCommand(['verify', taskId, '--export', receipt], { ...store, MCP_PAYLOAD_KEYS: keys });
    expect(verified.err).toBe('');
    expect(verified.code).toBe(0);
    expect(verified.out).toContain(secret.input.details.order);
    const keyless = approvalsCommand(['verify', taskId], { ...store, MCP_PAYLOAD_KEYS: '' });
    expect(keyless.code).toBe(2);
    expect(keyless.err).toContain('is encrypted (key "k1"): set MCP_PAYLOAD_KEYS');
    // The receipt is for an auditor without keys: plaintext, and it verifies offline.
    expect(readFileSync(receipt, 'utf8')).toContain(secret.input.details.order);
    expect(approvalsCommand(['verify', '--receipt', receipt], { MCP_PAYLOAD_KEYS: '' }).code).toBe(0);

    await stop(spawnedWorker, spawnedServer);
    const words = secretsOf(secret);
    // The history as Temporal's CLI shows it to anyone who may read the namespace.
    const history = show(taskId);
    expect(history).toContain('"encryption-key-id"');
    const readable = withBase64Decoded(history);
    for (const word of words) expect({ word, inHistory: readable.includes(word) }).toEqual({ word, inHistory: false });
    // The dev server's SQLite file (and its journal), as a copy of the disk would show it.
    const database = filesUnder(stateDir).filter((file) => /\.db(-wal|-journal)?$/.test(file));
    // The dev server still runs: its journal may come and go while the files are read.
    const bytes = Buffer.concat(database.flatMap((file) => stillThere(() => readFileSync(file)) ?? []));
    expect(bytes.includes(taskId)).toBe(true);
    for (const word of words) expect({ word, inDatabase: bytes.includes(word) }).toEqual({ word, inDatabase: false });
    // The decision store: the records of both approvals and the close, their bodies encrypted.
    const records = filesUnder(activities.decisionStore);
    expect(records.length).toBeGreaterThanOrEqual(3);
    const stored = records.map((file) => readFileSync(file, 'utf8')).join('\n');
    expect(stored).toContain('"encryptedBody"');
    for (const word of words) expect({ word, inStore: stored.includes(word) }).toEqual({ word, inStore: false });
    // The outbox of notifications: who was asked and when in the clear, the question encrypted; read back with the keys.
    const outbox = readFileSync(activities.notificationOutbox, 'utf8');
    expect(outbox).toContain(`"taskId":"${taskId}"`);
    for (const word of words) expect({ word, inOutbox: outbox.includes(word) }).toEqual({ word, inOutbox: false });
    const notices = await readNotifications(activities.notificationOutbox, readPayloadKeys(keys));
    expect(notices.find((notice) => notice.taskId === taskId && notice.kind === 'asked')?.message).toContain(secret.input.subject);
  }, 240_000);

  test('the codec server decodes for an operator, through the CLI; without authorization the CLI shows ciphertext', async () => {
    const operator = withBase64Decoded(show(taskId, ['--codec-endpoint', codecUrl, '--codec-auth', `Bearer ${people.olivia.token}`]));
    expect(operator).toContain(secret.input.details.order);
    expect(operator).toContain(secret.input.details.item);
    // sam holds no payload-reader role, and a caller without a token is refused outright.
    const refused = async (headers: Record<string, string>) =>
      (
        await fetch(`${codecUrl}/decode`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: '{"payloads":[]}',
        })
      ).status;
    expect(await refused({})).toBe(401);
    expect(await refused({ authorization: 'Bearer not-a-token-of-anyone-here' })).toBe(401);
    expect(await refused({ authorization: `Bearer ${people.sam.token}` })).toBe(403);
    // A page of another origin gets no answer it could read.
    const foreign = await fetch(`${codecUrl}/decode`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
    const bad = await fetch(`${codecUrl}/decode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${people.olivia.token}` },
      body: '{"payloads": "nope"}',
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: '"payloads" must be an array' });
  });

  test('the Web UI in Chromium: a stranger sees ciphertext; an operator signed in on the codec server sees the input decoded', async () => {
    browser = await launchChromium();
    const ui = `http://127.0.0.1:${port + 1000}`;
    const workflowPage = `${ui}/namespaces/default/workflows/${encodeURIComponent(taskId)}`;
    const order = secret.input.details.order;

    // A stranger: the UI asks the codec server, which refuses, and shows the payloads as they are stored.
    const stranger = await browser.newContext();
    const strangerPage = await stranger.newPage();
    const refusals: number[] = [];
    strangerPage.on('response', (response) => {
      if (response.url().startsWith(`${codecUrl}/decode`) && response.request().method() === 'POST') refusals.push(response.status());
    });
    await strangerPage.goto(workflowPage);
    await strangerPage.locator('#content').getByText('Codec Server could not connect').waitFor({ timeout: 60_000 });
    // The input as stored: the encoding (base64 of binary/encrypted) and the key id, no more.
    await strangerPage.getByText(Buffer.from('binary/encrypted').toString('base64')).first().waitFor();
    expect(refusals.length).toBeGreaterThan(0);
    expect(new Set(refusals)).toEqual(new Set([401]));
    expect(await strangerPage.content()).not.toContain(order);
    await stranger.close();

    // The operator signs in on the codec server's page, and tells the UI to send its cookie (the UI's codec setting).
    const operator = await browser.newContext();
    const signIn = await operator.newPage();
    await signIn.goto(`${codecUrl}/`);
    await signIn.getByLabel('Token').fill(people.olivia.token);
    await signIn.getByRole('button', { name: 'Sign in' }).click();
    await signIn
      .getByRole('status')
      .filter({ hasText: `Signed in as ${people.olivia.principal}` })
      .waitFor();
    await operator.addInitScript(
      ({ endpoint }) => {
        localStorage.setItem('endpoint', JSON.stringify(endpoint));
        localStorage.setItem('includeCredentials', 'true');
        localStorage.setItem('overrideRemoteCodecConfiguration', 'true');
      },
      { endpoint: codecUrl },
    );
    const page = await operator.newPage();
    await page.goto(workflowPage);
    await page.getByText(order).first().waitFor({ timeout: 60_000 });
    await operator.close();
  }, 180_000);

  test('rotation: a task started under k1 completes after k2 is put in front of it, and what it writes then is under k2', async () => {
    const first = keysFile('keys-rotate-1', [['k1', K1]]);
    let [spawnedWorker, spawnedServer] = await Promise.all([worker(first), server(first)]);
    let sam = await clients.connect(spawnedServer.url, people.sam);
    const rotatedTask = await startDecisionTask(sam, secretDecision().input);
    await awaitInInbox(await clients.connect(spawnedServer.url, people.ann), rotatedTask);
    await stop(spawnedWorker, spawnedServer);

    const rotated = keysFile('keys-rotate-2', [
      ['k2', K2],
      ['k1', K1],
    ]);
    [spawnedWorker, spawnedServer] = await Promise.all([worker(rotated), server(rotated)]);
    sam = await clients.connect(spawnedServer.url, people.sam);
    const [ann, bob] = await Promise.all([clients.connect(spawnedServer.url, people.ann), clients.connect(spawnedServer.url, people.bob)]);
    await awaitInInbox(ann, rotatedTask);
    expect((await answer(ann, rotatedTask, 'approve')).isError).toBeUndefined();
    expect((await answer(bob, rotatedTask, 'approve')).isError).toBeUndefined();
    expect(((await taskResult(sam, rotatedTask)).structuredContent as unknown as DecisionResult).outcome).toBe('approved');
    const ids = new Set(
      [...show(rotatedTask).matchAll(/"encryption-key-id":\s*"([^"]+)"/g)].map((match) => Buffer.from(match[1], 'base64').toString()),
    );
    expect(ids).toEqual(new Set(['k1', 'k2']));
    await stop(spawnedWorker, spawnedServer);
  }, 240_000);

  test('a key nobody holds: the read names it, the workflow task fails with the same text and the worker goes on; with the key back the task completes', async () => {
    const k2Keys = keysFile('keys-unknown-k2', [['k2', K2]]);
    const k3Keys = keysFile('keys-unknown-k3', [['k3', K3]]);
    // A bridge with k2 starts the task; the only worker holds k3 alone.
    const [wrongWorker, k2Server, k3Server] = await Promise.all([worker(k3Keys), server(k2Keys), server(k3Keys)]);
    const sam = await clients.connect(k2Server.url, people.sam);
    const stuck = await startDecisionTask(sam, secretDecision().input);
    const failedTask = await pollUntil(
      async () => {
        const history = await temporal.client.workflow.getHandle(stuck).fetchHistory();
        return history.events?.find((event) => event.workflowTaskFailedEventAttributes)?.workflowTaskFailedEventAttributes;
      },
      { timeoutMs: 60_000, what: 'the first workflow task to fail' },
    );
    expect(failedTask?.failure?.message).toContain('data encrypted with key "k2" cannot be read');
    // A bridge without the key answers the task's read with the same reason.
    const samOnK3 = await clients.connect(k3Server.url, people.sam);
    await expect(getTask(samOnK3, stuck)).rejects.toThrow(
      `This server cannot read the task's data: it is encrypted with key "k2", which this server's keys file does not hold; its operator must add that key (MCP_PAYLOAD_KEYS)`,
    );
    // No crash loop: the worker still runs.
    expect(
      await Promise.race([wrongWorker.exited.then(() => 'exited'), new Promise((resolve) => setTimeout(resolve, 500, 'running'))]),
    ).toBe('running');
    await stop(wrongWorker, k3Server);

    // The key is added to the worker's file and the bridge's: the task goes on from where it stood.
    const both = keysFile('keys-unknown-both', [
      ['k3', K3],
      ['k2', K2],
    ]);
    await stop(k2Server);
    const [rightWorker, rightServer] = await Promise.all([worker(both), server(both)]);
    const [samAgain, ann, bob] = await Promise.all(
      [people.sam, people.ann, people.bob].map((person) => clients.connect(rightServer.url, person)),
    );
    await awaitInInbox(ann, stuck, () => true, 60_000);
    await awaitInInbox(bob, stuck);
    expect((await answer(ann, stuck, 'approve')).isError).toBeUndefined();
    expect((await answer(bob, stuck, 'approve')).isError).toBeUndefined();
    expect(((await taskResult(samAgain, stuck)).structuredContent as unknown as DecisionResult).outcome).toBe('approved');
    expect(await effectsCarriedOut(temporal.client, stuck)).toBe(1);
    await stop(rightWorker, rightServer);
  }, 240_000);
});

test('the codec server takes an OAuth access token of its issuer whose roles hold payload-reader, as a Web UI that signs people in passes it', async () => {
  const issuer = await TestIssuer.start();
  try {
    const codecPort = await freePort();
    const resource = `http://127.0.0.1:${codecPort}`;
    await codecServer(keysFile('keys-oauth', [['k1', K1]]), codecPort, {
      MCP_AUTH_TOKENS_FILE: '',
      MCP_OAUTH_ISSUER: issuer.url,
      MCP_OAUTH_ROLES_CLAIM: 'roles',
    });
    const [encoded] = await new EncryptionCodec(new PayloadKeys([['k1', K1]])).encode([
      defaultPayloadConverter.toPayload({ vendor: 'Acme' }),
    ]);
    const decode = async (token: string) =>
      fetch(`${resource}/decode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: bodyOfPayloads([encoded]),
      });
    const reader = await decode(await issuer.token({ sub: 'olivia', aud: resource, roles: ['payload-reader'] }));
    expect(reader.status).toBe(200);
    const [decoded] = payloadsOfBody(await reader.text());
    expect(defaultPayloadConverter.fromPayload(decoded)).toEqual({ vendor: 'Acme' });
    expect((await decode(await issuer.token({ sub: 'mallory', aud: resource, roles: ['ap-approver'] }))).status).toBe(403);
    expect((await decode(await issuer.token({ sub: 'olivia', aud: 'https://elsewhere.example', roles: ['payload-reader'] }))).status).toBe(
      401,
    );
    expect((await decode(await issuer.token({ sub: 'olivia', aud: resource, roles: ['payload-reader'] }, 'stranger'))).status).toBe(401);
  } finally {
    await issuer.close();
  }
});

describe('a keys file that cannot be used stops every process at start, saying why', () => {
  const cases: Array<[string, () => string, RegExp]> = [
    ['readable by others', () => keysFile('open', [['k1']], 0o644), /may be read or written by others \(mode 644\).*chmod 600/],
    ['a key of 16 bytes', () => keysFile('short', [['k1', randomBytes(16)]]), /line 2: the key of "k1" is 16 bytes; AES-256 needs 32/],
    [
      'not "keyId base64key"',
      () => {
        const file = keysFile('malformed', [['k1']]);
        writeFileSync(file, 'just-one-field\n', { mode: 0o600 });
        return file;
      },
      /line 1: expected "keyId base64key", found 1 field/,
    ],
    ['missing', () => path.join(dir, 'no-such-keys'), /cannot read the keys file .*no-such-keys/],
  ];

  test.each(cases)('%s: serve exits 2', async (_name, make, message) => {
    const { code, stderr } = await runServeToExit(taskQueue, [], { TEMPORAL_ADDRESS: address, MCP_PAYLOAD_KEYS: make() });
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });

  test('the worker and the codec server exit 2 the same way', async () => {
    const file = keysFile('open-worker', [['k1']], 0o640);
    await expect(worker(file)).rejects.toThrow(
      /exited with 2 before it was ready:[\s\S]*MCP_PAYLOAD_KEYS: .* may be read or written by others \(mode 640\)/,
    );
    await expect(codecServer(file, await freePort())).rejects.toThrow(/may be read or written by others \(mode 640\)/);
  });
});
