/** The SEP-2243 codec of `Mcp-Param-*` headers, and the marks a tools file may carry, without Temporal. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  decodeParamValue,
  encodeParamValue,
  InvalidParamHeaderError,
  paramHeaderMismatch,
  paramHeadersOf,
  type ParamHeader,
} from '../../src/mcp/protocol/param-headers';
import { loadToolsFile, ToolsFileError } from '../../src/mcp/tools/config-file';
import { DEFAULT_TOOLS, toolTables } from '../../src/mcp/tools';
import { FIXTURE_TOOLS } from '../fixtures/tools';
import { envelopeRefusal } from '../../src/mcp/mcp2026/envelope';

const headersOf = (record: Record<string, string>) => (name: string) =>
  Object.entries(record).find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1];

describe('x-mcp-header marks', () => {
  test('a mark on a string, integer or boolean property reached through properties names its Mcp-Param header', () => {
    const schema = {
      type: 'object',
      properties: {
        region: { type: 'string', 'x-mcp-header': 'Region' },
        limits: { type: 'object', properties: { year: { type: 'integer', 'x-mcp-header': 'Year' } } },
        dryRun: { type: 'boolean', 'x-mcp-header': 'Dry-Run' },
        query: { type: 'string' },
      },
    };
    expect(paramHeadersOf(schema)).toEqual([
      { header: 'Mcp-Param-Region', path: ['region'], type: 'string' },
      { header: 'Mcp-Param-Year', path: ['limits', 'year'], type: 'integer' },
      { header: 'Mcp-Param-Dry-Run', path: ['dryRun'], type: 'boolean' },
    ]);
  });

  test.each<[string, Record<string, unknown>, Record<string, unknown>?]>([
    ['empty', { a: { type: 'string', 'x-mcp-header': '' } }],
    ['not a token', { a: { type: 'string', 'x-mcp-header': 'Has Space' } }],
    ['a control character', { a: { type: 'string', 'x-mcp-header': 'A\r\nB' } }],
    ['a number property', { a: { type: 'number', 'x-mcp-header': 'A' } }],
    ['an object property', { a: { type: 'object', 'x-mcp-header': 'A' } }],
    ['an untyped property', { a: { 'x-mcp-header': 'A' } }],
    [
      'a name used twice, in another case',
      { a: { type: 'string', 'x-mcp-header': 'Name' }, b: { type: 'string', 'x-mcp-header': 'NAME' } },
    ],
    ['under items', { a: { type: 'array', items: { type: 'string', 'x-mcp-header': 'A' } } }],
    ['under anyOf', { a: { anyOf: [{ type: 'string', 'x-mcp-header': 'A' }] } }],
    ['under $defs', { a: { type: 'string' } }, { $defs: { b: { type: 'string', 'x-mcp-header': 'B' } } }],
  ])('a mark %s is refused', (_what, properties, extra = {}) => {
    expect(() => paramHeadersOf({ type: 'object', properties, ...extra })).toThrow(InvalidParamHeaderError);
  });

  test("the built-in tools mark the taskId of the task tools, and nothing else; a workflow tool's unmarked arguments get no header", () => {
    const { paramHeaders } = toolTables([...FIXTURE_TOOLS, ...DEFAULT_TOOLS]);
    expect(Object.fromEntries(paramHeaders)).toEqual(
      Object.fromEntries(
        ['task_status', 'task_result', 'task_respond', 'task_cancel', 'approvals_answer'].map((name) => [
          name,
          [{ header: 'Mcp-Param-TaskId', path: ['taskId'], type: 'string' }],
        ]),
      ),
    );
  });

  test('a tools file with an invalid mark stops at load, naming the tool and the property', () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'marks-')), 'tools.yaml');
    writeFileSync(
      file,
      'tools:\n  - name: t\n    description: d\n    workflowType: w\n    inputSchema:\n      type: object\n      properties:\n        amount: { type: number, x-mcp-header: Amount }\n',
    );
    expect(() => loadToolsFile(file)).toThrow(ToolsFileError);
    expect(() => loadToolsFile(file)).toThrow(
      /tools\[0\]: t: inputSchema: amount: x-mcp-header may only mark a string, integer or boolean/,
    );
  });
});

describe('values', () => {
  test.each([
    ['us-west1', 'us-west1'],
    ['Hello, 世界', '=?base64?SGVsbG8sIOS4lueVjA==?='],
    [' padded ', '=?base64?IHBhZGRlZCA=?='],
    ['line1\nline2', '=?base64?bGluZTEKbGluZTI=?='],
    ['=?base64?literal?=', '=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?='],
  ])("%j is sent as %s (the spec's examples) and reads back", (value, header) => {
    expect(encodeParamValue(value)).toBe(header);
    expect(decodeParamValue(header)).toBe(value);
  });

  test('integers and booleans are sent as their decimal and lowercase forms', () => {
    expect([encodeParamValue(42), encodeParamValue(-7), encodeParamValue(true), encodeParamValue(false)]).toEqual([
      '42',
      '-7',
      'true',
      'false',
    ]);
  });

  test('a sentinel that is not canonical base64 of UTF-8, or a value with characters outside visible ASCII, is invalid', () => {
    expect(decodeParamValue('=?base64?SGVsbG8?=')).toBeUndefined();
    expect(decodeParamValue('=?base64?//79?=')).toBeUndefined();
    expect(decodeParamValue('caf\u00e9')).toBeUndefined();
  });
});

describe('headers against arguments', () => {
  const declared: ParamHeader[] = [
    { header: 'Mcp-Param-Region', path: ['region'], type: 'string' },
    { header: 'Mcp-Param-Year', path: ['filter', 'year'], type: 'integer' },
    { header: 'Mcp-Param-Dry', path: ['dry'], type: 'boolean' },
  ];

  test('headers that say what the arguments say pass, decoded, integers compared as numbers, names in any case', () => {
    const args = { region: 'Zürich', filter: { year: 42 }, dry: false };
    expect(
      paramHeaderMismatch(
        declared,
        args,
        headersOf({ 'mcp-param-region': '=?base64?WsO8cmljaA==?=', 'MCP-PARAM-YEAR': '42.0', 'Mcp-Param-Dry': 'false' }),
      ),
    ).toBeUndefined();
  });

  test('an absent or null argument expects no header; a header for it is ignored', () => {
    expect(paramHeaderMismatch(declared, { filter: { year: null } }, headersOf({}))).toBeUndefined();
    expect(paramHeaderMismatch(declared, {}, headersOf({ 'mcp-param-region': 'north' }))).toBeUndefined();
    expect(paramHeaderMismatch(declared, undefined, headersOf({}))).toBeUndefined();
  });

  test('a missing header, another value, a broken sentinel or characters a header may not carry are mismatches', () => {
    const args = { region: 'north' };
    expect(paramHeaderMismatch(declared, args, headersOf({}))).toMatchObject({
      header: 'Mcp-Param-Region',
      message: expect.stringMatching(/absent/),
    });
    expect(paramHeaderMismatch(declared, args, headersOf({ 'mcp-param-region': 'south' }))).toMatchObject({ header: 'Mcp-Param-Region' });
    expect(paramHeaderMismatch(declared, args, headersOf({ 'mcp-param-region': 'North' }))).toMatchObject({ header: 'Mcp-Param-Region' });
    expect(paramHeaderMismatch(declared, args, headersOf({ 'mcp-param-region': '=?base64?bm9ydGg?=' }))).toMatchObject({
      header: 'Mcp-Param-Region',
    });
    expect(paramHeaderMismatch(declared, args, headersOf({ 'mcp-param-region': 'north, north' }))).toMatchObject({
      header: 'Mcp-Param-Region',
    });
    expect(paramHeaderMismatch(declared, {}, headersOf({ 'mcp-param-region': 'nor\u00e9' }))).toMatchObject({
      message: expect.stringMatching(/characters/),
    });
    expect(paramHeaderMismatch(declared, { filter: { year: 7 } }, headersOf({ 'mcp-param-year': '0x7' }))).toMatchObject({
      header: 'Mcp-Param-Year',
    });
  });
});

describe('the 2026-07-28 envelope of a listen request', () => {
  test('no client capabilities is a malformed envelope (-32602), an unknown version -32022 with the versions served', () => {
    expect(envelopeRefusal({ _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } })).toMatchObject({ code: -32602 });
    expect(envelopeRefusal({})).toMatchObject({ code: -32602 });
    expect(
      envelopeRefusal({
        _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01', 'io.modelcontextprotocol/clientCapabilities': {} },
      }),
    ).toEqual({ code: -32022, message: expect.any(String), data: { supported: ['2026-07-28'], requested: '2099-01-01' } });
    expect(
      envelopeRefusal({
        _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
      }),
    ).toBeUndefined();
  });
});
