import { APPROVALS_PAGE_PATH, ApprovalLinks, QUESTION_LINK_PARAM, UNDATED_LINK_MS } from '../../src/records/approval-links';
import { SignedTokens } from '../../src/shared/signed-tokens';

const TASK_KEY = Buffer.from('k'.repeat(40));
const PUBLIC_URL = 'https://approvals.example.com';
const TARGET = { person: 'carol', taskId: 'invoice-1', key: 'approval' };
const NOW = Date.parse('2026-11-27T14:00:00.000Z');
const DUE = '2026-12-01T09:30:00.000Z';

/** The token of a link, as the page reads it from its query. */
function tokenOf(link: string): string {
  return new URL(link).searchParams.get(QUESTION_LINK_PARAM)!;
}

test('approval links: a link opens the approvals page and names the person, the task and the question it was made for', () => {
  const links = new ApprovalLinks(TASK_KEY);
  const link = new URL(links.link(PUBLIC_URL, TARGET, DUE, NOW));
  expect(`${link.origin}${link.pathname}`).toBe(`${PUBLIC_URL}${APPROVALS_PAGE_PATH}`);
  expect(links.read(tokenOf(link.href), NOW)).toEqual(TARGET);
  // Any replica or worker holding the task key reads it.
  expect(new ApprovalLinks(Buffer.from(TASK_KEY)).read(tokenOf(link.href), NOW)).toEqual(TARGET);
});

test('approval links: an altered token is refused', () => {
  const links = new ApprovalLinks(TASK_KEY);
  const token = tokenOf(links.link(PUBLIC_URL, TARGET, DUE, NOW));
  const [body, mac] = token.split('.');
  const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString('utf8')), p: 'mallory' }));
  expect(links.read(`${forged.toString('base64url')}.${mac}`, NOW)).toBeUndefined();
  const flipped = `${body}.${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`;
  expect(links.read(flipped, NOW)).toBeUndefined();
  expect(links.read(body, NOW)).toBeUndefined();
  expect(links.read('', NOW)).toBeUndefined();
  expect(links.read(`${token}${'x'.repeat(5_000)}`, NOW)).toBeUndefined();
});

test('approval links: a link expires when its question is due', () => {
  const links = new ApprovalLinks(TASK_KEY);
  const token = tokenOf(links.link(PUBLIC_URL, TARGET, DUE, NOW));
  expect(links.read(token, Date.parse(DUE) - 1)).toEqual(TARGET);
  expect(links.read(token, Date.parse(DUE))).toBeUndefined();
  expect(links.read(token, Date.parse(DUE) + 60_000)).toBeUndefined();
});

test('approval links: a link to a question without a deadline expires UNDATED_LINK_MS after it was made', () => {
  const links = new ApprovalLinks(TASK_KEY);
  for (const dueAt of [undefined, 'not a time']) {
    const token = tokenOf(links.link(PUBLIC_URL, TARGET, dueAt, NOW));
    expect(links.read(token, NOW + UNDATED_LINK_MS - 1)).toEqual(TARGET);
    expect(links.read(token, NOW + UNDATED_LINK_MS)).toBeUndefined();
  }
});

test('approval links: a link signed with another task key is refused', () => {
  const token = tokenOf(new ApprovalLinks(Buffer.from('o'.repeat(40))).link(PUBLIC_URL, TARGET, DUE, NOW));
  expect(new ApprovalLinks(TASK_KEY).read(token, NOW)).toBeUndefined();
});

test('approval links: a token of another purpose, signed with the same task key, is refused', () => {
  const exp = Date.parse(DUE);
  // Claims shaped as a link's, so that only the purpose tells them apart.
  const session = new SignedTokens(TASK_KEY, 'web session').sign({ p: TARGET.person, t: TARGET.taskId, k: TARGET.key, exp });
  expect(new ApprovalLinks(TASK_KEY).read(session, NOW)).toBeUndefined();
  // The same claims as an approval link's purpose are read, so the refusal above is the purpose's.
  const asLink = new SignedTokens(TASK_KEY, 'approval link').sign({ p: TARGET.person, t: TARGET.taskId, k: TARGET.key, exp });
  expect(new ApprovalLinks(TASK_KEY).read(asLink, NOW)).toEqual(TARGET);
});
