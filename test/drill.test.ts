import { formatMatrix, QUICK_CELLS, runDrill } from '../scripts/drill/drill';

// The reduced fault drill: real processes killed with SIGKILL and restarted. `npm run drill` runs the full matrix.
test('fault drill: every victim killed at a moment of the flow, and every run still ends paid, once, asked once', async () => {
  const { results, keptDir } = await runDrill(QUICK_CELLS, (line) => process.stderr.write(`${line}\n`));
  process.stderr.write(`${formatMatrix(results)}\n${keptDir ? `logs kept in ${keptDir}\n` : ''}`);
  expect(
    results.filter((result) => !result.ok).map((result) => `${result.moment} × ${result.victim}: ${result.problems.join('; ')}`),
  ).toEqual([]);
  expect(results).toHaveLength(QUICK_CELLS.length + 1);
}, 900_000);
