import { formatSoak, runSoak } from '../scripts/soak/soak';

// A short soak: invoices in flight, approved from their inboxes by people other than the submitter, while random
// parts of the system are SIGKILLed. `npm run soak` runs longer ones.
test('soak: with random kills every 15 s for 2 minutes, nothing is lost, paid twice, asked or answered twice, approved by the wrong people or orphaned', async () => {
  const report = await runSoak({ minutes: 2, concurrency: 4, killEverySeconds: 15, log: (line) => process.stderr.write(`${line}\n`) });
  process.stderr.write(`${formatSoak(report)}\n${report.keptDir ? `logs kept in ${report.keptDir}\n` : ''}`);
  expect(report.problems).toEqual([]);
  expect(report.tasks).toBeGreaterThan(0);
  expect(report.approvals).toBeGreaterThanOrEqual(report.tasks);
  expect(Object.values(report.kills).reduce((sum, kills) => sum + kills, 0)).toBeGreaterThan(0);
  expect({
    lost: report.lost,
    paidTwice: report.paidTwice,
    askedTwice: report.askedTwice,
    answeredTwice: report.answeredTwice,
    wrongApprovers: report.wrongApprovers,
    orphans: report.orphans,
  }).toEqual({ lost: 0, paidTwice: 0, askedTwice: 0, answeredTwice: 0, wrongApprovers: 0, orphans: 0 });
}, 900_000);
