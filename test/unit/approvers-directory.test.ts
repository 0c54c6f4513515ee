import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DecisionNotification } from '../../src/contract/approvals';
import { ApproversDirectory, ApproversDirectoryError } from '../../src/records/directory';

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

const people = [
  { name: 'sam', principals: ['sam', 'oauth:sam@example.com'], roles: ['ap-approver'], email: 'sam@example.com' },
  { name: 'ann', principals: ['ann', 'oauth:ann@example.com'], roles: ['ap-approver'], email: 'ann@example.com' },
  { name: 'bob', principals: ['bob'], roles: ['ap-approver', 'auditor'], webhook: 'https://hooks.example.com/bob' },
  { name: 'mia', principals: ['oauth:mia@example.com'], roles: ['ap-manager'], email: 'mia@example.com' },
  { name: 'olga', principals: ['olga'], email: 'olga@example.com' },
];

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'approvers-directory-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, content: unknown): string {
  const file = path.join(dir, name);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

const directory = () => ApproversDirectory.load(write('good.json', { people, webhookSecret: SECRET }));

function notification(overrides: Partial<DecisionNotification>): DecisionNotification {
  return {
    id: 'invoice-1/approval/asked/1',
    kind: 'asked',
    taskId: 'invoice-1',
    key: 'approval',
    message: 'Approve?',
    audience: { roles: ['ap-approver'], required: 2 },
    accepted: 0,
    required: 2,
    at: '2026-11-27T14:00:00.000Z',
    ...overrides,
  };
}

const names = (list: { name: string }[]) => list.map((person) => person.name);

test('approvers directory: people by principal, by name and by role; an unlisted principal is its default person', () => {
  const d = directory();
  expect(d.personOf('oauth:ann@example.com')).toBe('ann');
  expect(d.personOf('oauth:zoe')).toBe('zoe');
  expect(d.person('bob')?.webhook).toBe('https://hooks.example.com/bob');
  expect(d.person('nobody')).toBeUndefined();
  expect(names(d.holdersOf('ap-approver'))).toEqual(['sam', 'ann', 'bob']);
  expect(d.holdersOf('none')).toEqual([]);
  expect(d.webhookSecret).toBe(SECRET);
  expect(d.people.find((person) => person.name === 'olga')?.roles).toEqual([]);
});

test('approvers directory: mayAnswer is named (any principal or the name) or holding a role, never excluded', () => {
  const d = directory();
  expect(d.mayAnswer('ann', { roles: ['ap-approver'] })).toBe(true);
  expect(d.mayAnswer('oauth:ann@example.com', { roles: ['ap-approver'] })).toBe(true);
  expect(d.mayAnswer('mia', { roles: ['ap-approver'] })).toBe(false);
  expect(d.mayAnswer('oauth:mia@example.com', { principals: ['mia'] })).toBe(true);
  expect(d.mayAnswer('mia', { principals: ['oauth:mia@example.com'] })).toBe(true);
  expect(d.mayAnswer('ann', { roles: ['ap-approver'], exclude: ['oauth:ann@example.com'] })).toBe(false);
  expect(d.mayAnswer('stranger', { principals: ['stranger'] })).toBe(true);
  expect(d.mayAnswer('stranger', { roles: ['ap-approver'] })).toBe(false);
});

test('approvers directory: the audience is reached, never the submitter holding the role, nor who answered or is excluded', () => {
  const d = directory();
  expect(names(d.recipients(notification({ requester: 'oauth:sam@example.com' })))).toEqual(['ann', 'bob']);
  // As today's workflows send them: no requester, no answers.
  expect(names(d.recipients(notification({})))).toEqual(['sam', 'ann', 'bob']);
  expect(names(d.recipients(notification({ kind: 'reminder', requester: 'sam', answeredBy: ['oauth:ann@example.com'] })))).toEqual(['bob']);
  expect(names(d.recipients(notification({ requester: 'sam', audience: { roles: ['ap-approver'], exclude: ['bob'] } })))).toEqual(['ann']);
  const escalated = notification({
    kind: 'escalated',
    requester: 'sam',
    answeredBy: ['ann'],
    audience: { roles: ['ap-approver', 'ap-manager'] },
  });
  expect(names(d.recipients(escalated))).toEqual(['bob', 'mia']);
  // Named principals and names both count; principals nobody lists cannot be reached.
  expect(names(d.recipients(notification({ audience: { principals: ['olga', 'oauth:mia@example.com', 'ghost'] } })))).toEqual([
    'mia',
    'olga',
  ]);
});

test('approvers directory: a delegation reaches the delegate only; a decision reaches the requester, then everyone asked', () => {
  const d = directory();
  const delegated = notification({
    kind: 'delegated',
    requester: 'sam',
    delegatedBy: 'ann',
    delegatedTo: 'oauth:mia@example.com',
    answeredBy: ['ann'],
  });
  expect(names(d.recipients(delegated))).toEqual(['mia']);
  // Without delegatedTo (today's workflows), the people the audience names: where a delegate is added.
  const older = notification({ kind: 'delegated', audience: { roles: ['ap-approver'], principals: ['olga'] } });
  expect(names(d.recipients(older))).toEqual(['olga']);
  // The requester first (holding the role, still told as the requester), then the audience, those who answered too.
  const decided = notification({ kind: 'decided', outcome: 'accepted', requester: 'oauth:sam@example.com', answeredBy: ['ann'] });
  expect(names(d.recipients(decided))).toEqual(['sam', 'ann', 'bob']);
  // One escalated to, or handed it and named only among those who answered, learns it too; the excluded never.
  const handed = notification({
    kind: 'decided',
    outcome: 'declined',
    requester: 'sam',
    answeredBy: ['oauth:mia@example.com'],
    audience: { principals: ['olga'], exclude: ['bob'] },
  });
  expect(names(d.recipients(handed))).toEqual(['sam', 'mia', 'olga']);
  expect(names(d.recipients(notification({ kind: 'decided', requester: 'zoe', audience: { principals: ['olga'] } })))).toEqual(['olga']);
  expect(d.recipients(notification({ kind: 'decided', audience: { principals: ['ghost'] } }))).toEqual([]);
});

test('approvers directory: a bad file throws naming the file, the entry and what to fix', () => {
  const bad = (name: string, content: unknown) => {
    const file = write(name, content);
    try {
      ApproversDirectory.load(file);
    } catch (error) {
      expect(error).toBeInstanceOf(ApproversDirectoryError);
      expect((error as ApproversDirectoryError).file).toBe(file);
      return (error as Error).message;
    }
    throw new Error(`${name} loaded`);
  };
  const file = path.join(dir, 'email.json');
  expect(bad('email.json', { people: [people[0], { ...people[1], email: 'ann-at-example' }] })).toBe(
    `approvers directory ${file}: people[1] ("ann").email: use a mail address such as carol@example.com`,
  );
  expect(bad('hook.json', { people: [{ name: 'bob', webhook: 'ftp://x' }] })).toContain(
    'people[0] ("bob").webhook: use an http:// or https:// URL',
  );
  expect(bad('typo.json', { people: [{ name: 'bob', emial: 'bob@example.com' }] })).toContain(
    'people[0] ("bob"): Unrecognized key: "emial"',
  );
  expect(bad('twice.json', { people: [people[0], { name: 'sam2', principals: ['oauth:sam@example.com'] }] })).toContain(
    'people[1] ("sam2").principals.0: "oauth:sam@example.com" is listed by people[0] ("sam") too; a principal stands for one person',
  );
  expect(bad('names.json', { people: [people[0], { name: 'sam' }] })).toContain(
    'people[1] ("sam").name: "sam" is the name of people[0] too',
  );
  const secret = bad('secret.json', { people, webhookSecret: 'whsec_short' });
  expect(secret).toContain('webhookSecret: use "whsec_" followed by the base64 of 24 to 64 random bytes');
  expect(secret).not.toContain('whsec_short');
  expect(bad('json.json', '{ "people": [')).toMatch(/is not JSON .*write \{ "people"/);
  expect(bad('none.json', { persons: [] })).toContain('people: ');
  expect(() => ApproversDirectory.load(path.join(dir, 'missing.json'))).toThrow(
    `approvers directory ${path.join(dir, 'missing.json')}: no such file; create it or point MCP_APPROVERS_DIRECTORY at it`,
  );
});

test('approvers directory: fromEnv reads MCP_APPROVERS_DIRECTORY, and is undefined without it', () => {
  expect(ApproversDirectory.fromEnv({})).toBeUndefined();
  expect(ApproversDirectory.fromEnv({ MCP_APPROVERS_DIRECTORY: ' ' })).toBeUndefined();
  const file = write('env.json', { people });
  expect(ApproversDirectory.fromEnv({ MCP_APPROVERS_DIRECTORY: file })?.source).toBe(file);
});
