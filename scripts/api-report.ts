/**
 * npm run api-report [-- --update] [-- --help]: the package's public API as a report checked in under api/, one per
 * entry point (`temporal-mcp-tasks` and `temporal-mcp-tasks/workflow`), made by API Extractor from the declarations
 * the build emits. `npm test` runs it: an API that differs from its report fails, so every change to it shows in
 * review. `--update` writes the reports anew after a change meant to be made.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Extractor, ExtractorConfig, ExtractorLogLevel, type IConfigFile } from '@microsoft/api-extractor';

const HELP = `Usage: npm run api-report [-- --update] [-- --help]

Compares the package's public API (the exports of "." and "./workflow", read from the declarations tsc emits) with
the reports checked in under api/, and fails when they differ: a change to the API is made on purpose, by running
this with --update and committing the reports it writes.

  --update   write the reports anew (after a change to the API meant to be made)

Exit code 0 when the API is as its reports say (or they were written), 1 when it differs, has an export without a
doc comment, or has signatures that use types it does not export, 2 for a bad command line.
`;

const ROOT = path.resolve(__dirname, '..');
/**
 * Where the declarations and API Extractor's own copies go: a folder of the checkout that git ignores, removed at the
 * end (inside the project, so that the report names files by their place in it; outside node_modules, whose
 * declarations API Extractor takes for other packages').
 */
const WORK = path.join(ROOT, '.api-report');
const ENTRY_POINTS = [
  { name: 'temporal-mcp-tasks', declarations: 'index.d.ts' },
  { name: 'temporal-mcp-tasks-workflow', declarations: 'workflow.d.ts' },
];

function main(argv: string[]): number {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(HELP);
    return 0;
  }
  const unknown = argv.find((arg) => arg !== '--update');
  if (unknown) {
    process.stderr.write(`api-report: unknown argument "${unknown}"; see --help\n`);
    return 2;
  }
  const update = argv.includes('--update');
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(WORK, { recursive: true });
  const declarations = path.join(WORK, 'dts');
  process.stderr.write('api-report: emitting declarations…\n');
  execFileSync(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--emitDeclarationOnly', '--outDir', declarations],
    { cwd: ROOT, stdio: 'inherit' },
  );
  const packageJsonFullPath = path.join(ROOT, 'package.json');
  let failed = false;
  for (const entry of ENTRY_POINTS) {
    const config: IConfigFile = {
      projectFolder: ROOT,
      newlineKind: 'lf',
      mainEntryPointFilePath: path.join(declarations, entry.declarations),
      compiler: { tsconfigFilePath: path.join(ROOT, 'tsconfig.build.json') },
      apiReport: {
        enabled: true,
        reportFileName: entry.name,
        reportFolder: path.join(ROOT, 'api'),
        reportTempFolder: path.join(WORK, 'temp'),
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Warning } },
        extractorMessageReporting: {
          // The report holds the API's shape alone: what API Extractor notes about it would name lines of files.
          default: { logLevel: ExtractorLogLevel.None },
          // An export without a comment is marked "(undocumented)" in the report, and refused below (members are said
          // in their type's comment).
          'ae-undocumented': { logLevel: ExtractorLogLevel.None },
          // A type an exported signature uses that the entry does not export: collected, and refused below.
          'ae-forgotten-export': { logLevel: ExtractorLogLevel.Warning, addToApiReportFile: false },
        },
        tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
      },
    };
    const prepared = ExtractorConfig.prepare({
      configObject: config,
      configObjectFullPath: undefined,
      packageJsonFullPath,
      packageJson: JSON.parse(readFileSync(packageJsonFullPath, 'utf8')),
    });
    const forgotten = new Set<string>();
    const result = Extractor.invoke(prepared, {
      localBuild: update,
      showVerboseMessages: false,
      messageCallback: (message) => {
        if (message.messageId !== 'ae-forgotten-export') return;
        const symbol = /The symbol "([^"]+)"/.exec(message.text)?.[1];
        if (symbol) forgotten.add(symbol);
        message.handled = true;
      },
    });
    const names = undocumented(update ? prepared.reportFilePath : prepared.reportTempFilePath);
    const report = path.relative(ROOT, prepared.reportFilePath);
    if (result.apiReportChanged && !update) {
      process.stderr.write(
        `api-report: the API of ${entry.name} differs from ${report}:\n${changedLines(prepared.reportFilePath, prepared.reportTempFilePath)}` +
          `If the change is meant, run npm run api-report -- --update and commit ${report}\n`,
      );
      failed = true;
    } else if (forgotten.size > 0) {
      process.stderr.write(
        `api-report: ${entry.name}'s exported signatures use ${[...forgotten].sort().join(', ')}, which it does not export: ` +
          'export each (with a doc comment), or keep it out of the signatures\n',
      );
      failed = true;
    } else if (names.length > 0) {
      process.stderr.write(`api-report: ${entry.name} exports ${names.join(', ')} without a doc comment: say what each is for\n`);
      failed = true;
    } else if (!result.succeeded) {
      process.stderr.write(`api-report: ${entry.name}: ${result.errorCount} error(s) above\n`);
      failed = true;
    } else {
      process.stderr.write(`api-report: ${entry.name}: ${update && result.apiReportChanged ? 'written to' : 'as in'} ${report}\n`);
    }
  }
  rmSync(WORK, { recursive: true, force: true });
  return failed ? 1 : 0;
}

/** The lines only one of two reports has, `-` the checked-in one's and `+` the fresh one's (at most 40 of each). */
function changedLines(checkedIn: string, fresh: string): string {
  const before = readFileSync(checkedIn, 'utf8').split(/\r?\n/);
  const after = readFileSync(fresh, 'utf8').split(/\r?\n/);
  const gone = before.filter((line) => !after.includes(line) && line.trim() !== '');
  const added = after.filter((line) => !before.includes(line) && line.trim() !== '');
  const shown = (sign: string, lines: string[]) => [
    ...lines.slice(0, 40).map((line) => `  ${sign} ${line}\n`),
    ...(lines.length > 40 ? [`  ${sign} … ${lines.length - 40} more\n`] : []),
  ];
  return [...shown('-', gone), ...shown('+', added)].join('');
}

/** The exports a report marks "(undocumented)": the names of top-level declarations without a doc comment. */
function undocumented(report: string): string[] {
  const lines = readFileSync(report, 'utf8').split(/\r?\n/);
  return lines.flatMap((line, index) => {
    // Top-level only (members are said in their type's comment): `// (undocumented)` or `// @public (undocumented)`.
    if (!/^\/\/ (?:@\w+ )?\(undocumented\)$/.test(line)) return [];
    const declared = /^export (?:declare )?(?:abstract )?(?:function|const|class|interface|type|enum) (\w+)/.exec(lines[index + 1] ?? '');
    return declared ? [declared[1]] : [];
  });
}

process.exitCode = main(process.argv.slice(2));
