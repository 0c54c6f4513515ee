/** The command line of `serve` and the rule that decides whether it serves the sample tools. No server, no Temporal. */
import path from 'node:path';
import { parseServeArgs, samplesByDefault, UsageError } from '../../src/mcp/serve/args';
import { localRolesFor } from '../../src/mcp/serve/local-roles';

const ROOT = path.resolve(__dirname, '..', '..');

describe('samplesByDefault', () => {
  test('the TypeScript sources of a checkout (npm run serve through tsx) serve the samples by default', () => {
    expect(samplesByDefault(require.resolve('../../src/mcp/serve/main'))).toBe(true);
    expect(samplesByDefault(path.join(ROOT, 'src', 'mcp', 'serve', 'main.ts'))).toBe(true);
  });

  test('the compiled server (dist/, all an installed package holds) serves none by default', () => {
    expect(samplesByDefault(path.join(ROOT, 'dist', 'mcp', 'serve', 'main.js'))).toBe(false);
    expect(samplesByDefault('/app/node_modules/temporal-mcp-tasks/dist/mcp/serve/main.js')).toBe(false);
  });
});

describe('parseServeArgs', () => {
  test('without --samples or --no-samples the default decides', () => {
    expect(parseServeArgs([], { samples: true }).samples).toBe(true);
    expect(parseServeArgs([], { samples: false }).samples).toBe(false);
  });

  test.each<[string[], boolean, boolean]>([
    [['--samples'], false, true],
    [['--no-samples'], true, false],
    [['--samples', '--no-samples'], false, false],
    [['--no-samples', '--samples'], true, true],
  ])('%j with the default %s serves the samples: %s (the last flag counts)', (argv, byDefault, served) => {
    expect(parseServeArgs(argv, { samples: byDefault }).samples).toBe(served);
  });

  test('the samples flags go with every other option', () => {
    expect(parseServeArgs(['--http', '127.0.0.1:3000', '--no-auth', '--no-samples', '--tools=tools.yaml'], { samples: true })).toEqual({
      help: false,
      check: false,
      noAuth: true,
      samples: false,
      tools: 'tools.yaml',
      http: { host: '127.0.0.1', port: 3000 },
    });
    expect(parseServeArgs(['--http=[::1]:8080', '--samples', '--tools', 'a.json'], { samples: false })).toEqual({
      help: false,
      check: false,
      noAuth: false,
      samples: true,
      tools: 'a.json',
      http: { host: '::1', port: 8080 },
    });
  });

  test.each<[string[], RegExp]>([
    [['--sample'], /unknown argument "--sample"/],
    [['--samples=yes'], /unknown argument "--samples=yes"/],
    [['--tools'], /--tools needs a file/],
    [['--http', '3000'], /--http needs HOST:PORT/],
    [['--http', '127.0.0.1:70000'], /--http needs HOST:PORT/],
    [['--no-auth'], /--no-auth goes with --http/],
  ])('%j is refused with a UsageError saying what to change', (argv, message) => {
    expect(() => parseServeArgs(argv, { samples: true })).toThrow(UsageError);
    expect(() => parseServeArgs(argv, { samples: true })).toThrow(message);
  });
});

describe('local roles', () => {
  const http = { url: 'http://127.0.0.1:3000/mcp', noAuth: false, authenticated: false };

  test('--local-roles-over-http goes with --http only', () => {
    expect(parseServeArgs(['--http', '127.0.0.1:3000', '--local-roles-over-http'], { samples: false }).localRolesOverHttp).toBe(true);
    expect(parseServeArgs(['--http', '127.0.0.1:3000'], { samples: false }).localRolesOverHttp).toBeUndefined();
    expect(() => parseServeArgs(['--local-roles-over-http'], { samples: false })).toThrow(
      new UsageError('--local-roles-over-http goes with --http (over stdio MCP_LOCAL_ROLES always apply)'),
    );
  });

  test('MCP_LOCAL_ROLES apply to stdio, silently', () => {
    expect(localRolesFor({ env: 'a,b', overHttp: false, principal: 'me' })).toEqual({ roles: ['a', 'b'], warnings: [] });
  });

  test('over HTTP they are ignored unless asked for, with a warning that says why and how', () => {
    const ignored = localRolesFor({ env: 'ap-approver', overHttp: false, principal: 'me', http });
    expect(ignored.roles).toEqual([]);
    expect(ignored.warnings).toEqual([
      'serve: MCP_LOCAL_ROLES (ap-approver) is ignored over HTTP: it would give those roles to EVERY process and user of this machine ' +
        'that connects to http://127.0.0.1:3000/mcp. It applies to stdio; to grant them over HTTP anyway, pass --local-roles-over-http',
    ]);
    expect(localRolesFor({ env: undefined, overHttp: false, principal: 'me', http })).toEqual({ roles: [], warnings: [] });
  });

  test('asked for over HTTP, they apply and the server says loudly what it grants to whom', () => {
    const granted = localRolesFor({ env: 'ap-approver', overHttp: true, principal: 'me', http: { ...http, noAuth: true } });
    expect(granted.roles).toEqual(['ap-approver']);
    expect(granted.warnings).toEqual([
      'serve: WARNING: --local-roles-over-http: EVERY caller that reaches http://127.0.0.1:3000/mcp (--no-auth: anyone on the network ' +
        'who can connect) acts as me with the role(s) ap-approver, and may answer every question addressed to them. Give people tokens ' +
        'with roles instead (MCP_AUTH_TOKENS_FILE)',
    ]);
  });

  test('with tokens every request authenticates: the roles are ignored, and the flag is refused', () => {
    const authenticated = { ...http, authenticated: true };
    expect(localRolesFor({ env: 'a', overHttp: false, principal: 'me', http: authenticated }).roles).toEqual([]);
    expect(() => localRolesFor({ env: 'a', overHttp: true, principal: 'me', http: authenticated })).toThrow(UsageError);
  });
});
