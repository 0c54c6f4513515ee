import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import {
  applyConfirmation,
  confirmationRequest,
  declinedResult,
  pendingConfirmationResult,
  previousAnswerProblem,
} from '../../src/mcp/protocol/confirmation';
import { refusalBackoffMs } from '../../src/mcp/mcp2025/server';
import { CallSeal } from '../../src/mcp/protocol/signed-call';
import { legacyDerivedUuid } from '../../src/core/idempotency';
import { argumentsDigest, canonicalJson } from '../../src/util/arguments-digest';
import { decodeCursor, encodeCursor, listBinding } from '../../src/core/list-cursor';
import { TaskMarker } from '../../src/core/marker';
import { Quotas } from '../../src/core/quotas';
import { fakeSharedState, unreachableSharedState } from '../helpers/shared-state';
import type { WorkflowTool } from '../../src/mcp/tools/types';
import { AnswerSeal } from '../../src/shared/answer-proof';
import { checkFormContent, openSealedAnswer } from '../../src/contract/task-contract';
import { formFieldsOf } from '../../src/core/answers';
import { answerRefusal, awaitingKeywords, delegationRefusal } from '../../src/contract/approvals';
import { parseRoles } from '../../src/core/principal';
import { tokensFromEnv } from '../../src/mcp/transports/auth';
import { claimsModernEnvelope } from '../../src/mcp/mcp2026/http-leg';
import { isLegacyRequest } from '@modelcontextprotocol/server';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { escapeControls, Logger, withLogContext, withoutLogContext } from '../../src/util/log';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Metadata } from '@grpc/grpc-js';
import { ApplicationFailure, NamespaceNotFoundError } from '@temporalio/common';
import { google } from '@temporalio/proto';
import { isTransient } from '../../src/client/connection';
import { isTemporalUnavailable, TooManyRequestsError } from '../../src/core/errors';
import { jsonRpcFailureOf, plainMessage, type JsonRpcFailure } from '../../src/mcp/protocol/wire-errors';
import { answerRefusalReason, answerRefusedFailure } from '../../src/contract/answer-update';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { questionRequest } from '../fixtures/definitions';

describe('reasons read from fields, not from words', () => {
  test("a workflow's refusal of an answer gives its reason as the failure's first detail", () => {
    const failure = answerRefusedFailure('this question is not addressed to you');
    expect(failure).toMatchObject({
      type: 'AnswerRefused',
      nonRetryable: true,
      message: 'Answer refused: this question is not addressed to you',
    });
    expect(answerRefusalReason(failure)).toBe('this question is not addressed to you');
    expect(answerRefusalReason(ApplicationFailure.create({ message: 'Answer refused: x', type: 'Other', details: ['x'] }))).toBeUndefined();
    expect(answerRefusalReason(ApplicationFailure.create({ message: 'Answer refused: x', type: 'AnswerRefused' }))).toBeUndefined();
    expect(answerRefusalReason(new Error('Answer refused: x'))).toBeUndefined();
  });

  test("an MCP error's message without the SDK's prefix, made from its own code", () => {
    expect(plainMessage(new McpError(-32602, 'Task not found: x'))).toBe('Task not found: x');
    expect(plainMessage(new McpError(-32603, 'MCP error -32602: inner'))).toBe('MCP error -32602: inner');
    expect(plainMessage(new Error('MCP error -32602: not an McpError'))).toBe('MCP error -32602: not an McpError');
  });
});

describe('transient failures', () => {
  test("a balancer's 502/503/504 is transient for the client; other statuses are not", () => {
    for (const code of [502, 503, 504]) expect(isTransient(new StreamableHTTPError(code, 'gateway'))).toBe(true);
    for (const code of [400, 401, 404, 500]) expect(isTransient(new StreamableHTTPError(code, 'no'))).toBe(false);
  });

  test('"namespace not found" from Temporal is an unavailable Temporal for the server; other not-founds are not', () => {
    expect(isTemporalUnavailable(new NamespaceNotFoundError('default'))).toBe(true);
    const grpc = (code: number, details: string, detail?: string) => {
      const metadata = new Metadata();
      if (detail) {
        const status = google.rpc.Status.encode({
          code,
          message: details,
          details: [{ type_url: `type.googleapis.com/${detail}`, value: Buffer.alloc(0) }],
        });
        metadata.set('grpc-status-details-bin', Buffer.from(status.finish()));
      }
      return Object.assign(new Error(`${code} ${details}`), { code, details, metadata });
    };
    // Told by the status's detail, as Temporal gives it, never by the words.
    const namespace = 'temporal.api.errordetails.v1.NamespaceNotFoundFailure';
    expect(isTemporalUnavailable(grpc(5, 'Namespace default is not found.', namespace))).toBe(true);
    expect(isTemporalUnavailable(grpc(5, 'Namespace default is not found.'))).toBe(false);
    expect(isTemporalUnavailable(grpc(5, 'workflow execution not found', 'temporal.api.errordetails.v1.NotFoundFailure'))).toBe(false);
    expect(isTemporalUnavailable(grpc(5, 'workflow execution not found'))).toBe(false);
    expect(isTemporalUnavailable(grpc(14, 'UNAVAILABLE'))).toBe(true);
  });

  test('a call cancelled under it (CANCELLED) is an unavailable Temporal: followers and subscription reads wait it out', () => {
    const grpc = (code: number, details: string) => Object.assign(new Error(`${code} ${details}`), { code, details, metadata: {} });
    expect(isTemporalUnavailable(grpc(1, 'CANCELLED: The connection to Temporal is closed'))).toBe(true);
    expect(isTemporalUnavailable(grpc(4, 'DEADLINE_EXCEEDED'))).toBe(true);
    expect(isTemporalUnavailable(grpc(3, 'INVALID_ARGUMENT'))).toBe(false);
  });

  test("a call Temporal's side cancelled is a retryable -32603 for the client, not an internal fault", () => {
    const grpc = (code: number, details: string) => Object.assign(new Error(`${code} ${details}`), { code, details, metadata: {} });
    expect(jsonRpcFailureOf(grpc(1, 'CANCELLED: Call cancelled'))).toEqual({
      code: -32603,
      message: 'Temporal is unavailable right now (1 CANCELLED: Call cancelled); retry shortly',
      data: { retryable: true },
    });
    expect(jsonRpcFailureOf(grpc(13, 'INTERNAL: boom'))).toBeUndefined();
  });
});

describe('idempotency', () => {
  test('keyedUuid: the same call maps to the same UUID v4-shaped id under one task key; another principal, tool, key or task key to another, and never the plain digest', () => {
    const marker = new TaskMarker(Buffer.alloc(32, 1));
    const id = marker.keyedUuid('alice', 'process_invoice', 'k-1');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new TaskMarker(Buffer.alloc(32, 1)).keyedUuid('alice', 'process_invoice', 'k-1')).toBe(id);
    expect(
      new Set([
        marker.keyedUuid('bob', 'process_invoice', 'k-1'),
        marker.keyedUuid('alice', 'other', 'k-1'),
        marker.keyedUuid('alice', 'process_invoice', 'k-2'),
        new TaskMarker(Buffer.alloc(32, 2)).keyedUuid('alice', 'process_invoice', 'k-1'),
        legacyDerivedUuid('alice', 'process_invoice', 'k-1'),
      ]).has(id),
    ).toBe(false);
    // The ids of versions before keyed ids, looked up for calls repeated across the upgrade.
    expect(legacyDerivedUuid('alice', 'process_invoice', 'k-1')).toBe(legacyDerivedUuid('alice', 'process_invoice', 'k-1'));
  });

  test('canonicalJson and argumentsDigest: key order and undefined values do not matter, array order does', () => {
    expect(canonicalJson({ b: 1, a: [2, 1], c: undefined })).toBe('{"a":[2,1],"b":1}');
    expect(argumentsDigest({ a: 1, b: { d: 2, c: 3 } })).toBe(argumentsDigest({ b: { c: 3, d: 2 }, a: 1 }));
    expect(argumentsDigest({ a: [1, 2] })).not.toBe(argumentsDigest({ a: [2, 1] }));
  });
});

describe('list cursors', () => {
  test('a cursor round-trips for its principal and query, and is -32602 for another principal, made up or oversized', () => {
    const binding = listBinding('alice', "McpPrincipal = 'alice'");
    const cursor = encodeCursor(Buffer.from('page-2'), binding);
    expect(Buffer.from(decodeCursor(cursor, binding)).toString()).toBe('page-2');
    const code = (attempt: () => unknown) => {
      try {
        attempt();
      } catch (error) {
        return jsonRpcFailureOf(error)?.code;
      }
      return 'accepted';
    };
    expect(code(() => decodeCursor(cursor, listBinding('bob', "McpPrincipal = 'bob'")))).toBe(ErrorCode.InvalidParams);
    expect(code(() => decodeCursor('not-a-cursor', binding))).toBe(ErrorCode.InvalidParams);
    expect(code(() => decodeCursor('x'.repeat(5000), binding))).toBe(ErrorCode.InvalidParams);
  });
});

describe('answer seals', () => {
  const run = { workflowId: 'invoice-1', originalRunId: 'run-1' };
  const seal = new AnswerSeal(Buffer.alloc(32, 7));
  const answer = { key: 'approval', action: 'accept' as const, content: { decision: 'approve', note: 'ok ✓' } };
  const sealed = seal.seal(run, answer, { principal: 'static:alice', via: 'task_respond' }, new Date('2026-01-01T00:00:00Z'));

  test('the sealed text carries the answer, its run and who gave it; the proof holds for it and for nothing else', () => {
    expect(openSealedAnswer(sealed.sealed, run)).toEqual({
      v: 1,
      ...run,
      ...answer,
      answeredBy: { principal: 'static:alice', via: 'task_respond' },
      answeredAt: '2026-01-01T00:00:00.000Z',
    });
    expect(sealed).toMatchObject({ ...answer, answeredBy: { principal: 'static:alice' }, proof: expect.stringMatching(/^v1\.\S{8}\./) });
    expect(seal.check({ sealed: sealed.sealed!, proof: sealed.proof! })).toEqual({ ok: true });
    expect(seal.check({ sealed: sealed.sealed!.replace('alice', 'bob'), proof: sealed.proof! })).toEqual({
      ok: false,
      reason: 'a proof that does not match',
    });
    expect(new AnswerSeal(Buffer.alloc(32, 8)).check({ sealed: sealed.sealed!, proof: sealed.proof! })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^a proof made with key \S+, not this worker's key \S+$/),
    });
    expect(seal.check({ sealed: sealed.sealed!, proof: 'v2.x.y' })).toMatchObject({ ok: false });
    expect(seal.check({ sealed: sealed.sealed!, proof: undefined as unknown as string })).toEqual({ ok: false, reason: 'no proof' });
  });

  test('a seal of another run, of another version, or without an answer does not open', () => {
    expect(openSealedAnswer(sealed.sealed, { ...run, originalRunId: 'run-2' })).toBe('its seal was made for another run');
    expect(openSealedAnswer(undefined, run)).toBe('it carries no seal');
    expect(openSealedAnswer('{', run)).toBe('its seal is not JSON');
    expect(openSealedAnswer(sealed.sealed!.replace('"v":1', '"v":2'), run)).toBe('its seal is of an unknown version');
    expect(openSealedAnswer(sealed.sealed!.replace('"accept"', '"cancel"'), run)).toBe('its seal has no answer');
  });
});

describe('addressed questions', () => {
  const input = {
    key: 'approval',
    request: { mode: 'form' as const, message: 'Approve?', requestedSchema: { type: 'object' as const, properties: {} } },
    audience: { roles: ['approver'], principals: ['static:ops'], exclude: ['static:bob'], required: 2 },
    requester: 'static:alice',
    answers: [{ principal: 'static:carol', roles: ['approver'], action: 'accept' as const, at: '2026-01-01T00:00:00.000Z' }],
    askedAt: '2026-01-01T00:00:00.000Z',
  };

  test('who may answer: named or in a role; not excluded, not the requester, not twice', () => {
    const who = (principal: string, roles: string[], person?: string) => ({ principal, roles, ...(person && { person }) });
    expect(answerRefusal(input, who('static:erin', ['approver']))).toBeUndefined();
    expect(answerRefusal(input, who('static:ops', []))).toBeUndefined();
    expect(answerRefusal(input, who('static:dave', ['viewer']))).toBe('this question is not addressed to you');
    expect(answerRefusal(input, who('static:bob', ['approver']))).toBe('you are excluded from answering this question');
    expect(answerRefusal(input, who('static:alice', ['approver']))).toBe('this is your own request: someone else must approve it');
    // The submitter without the role hears that it is her own request, not that it is not addressed to her.
    expect(answerRefusal(input, who('static:alice', []))).toBe('this is your own request: someone else must approve it');
    expect(
      answerRefusal({ ...input, audience: { ...input.audience, allowRequester: true } }, who('static:alice', ['approver'])),
    ).toBeUndefined();
    expect(answerRefusal(input, who('static:carol', ['approver']))).toBe('you have answered this question already');
    expect(awaitingKeywords(input.audience)).toEqual(['principal:static:ops', 'role:approver']);
  });

  test('four eyes count people: the static carol and oauth:carol are one person, and a directory can join others', () => {
    const carol = { ...input, requester: 'alice', answers: [{ ...input.answers[0], principal: 'carol' }] };
    expect(answerRefusal(carol, { principal: 'oauth:carol', roles: ['approver'] })).toBe('you have answered this question already');
    // A directory says static:c.smith is carol too: the bridge passes the person it resolved.
    expect(answerRefusal(carol, { principal: 'static:c.smith', roles: ['approver'], person: 'carol' })).toBe(
      'you have answered this question already',
    );
    expect(answerRefusal(carol, { principal: 'oauth:alice', roles: ['approver'] })).toBe(
      'this is your own request: someone else must approve it',
    );
    expect(answerRefusal(carol, { principal: 'static:a', roles: ['approver'], person: 'al' }, 'al')).toBe(
      'this is your own request: someone else must approve it',
    );
  });

  test('a hand-over goes to someone else eligible for the question: not oneself, not the requester, not excluded, not twice', () => {
    const erin = { principal: 'static:erin' };
    expect(delegationRefusal(input, erin, 'static:frank', ['approver'])).toBeUndefined();
    // Named in the question: eligible without a role.
    expect(delegationRefusal(input, erin, 'static:ops', undefined)).toBeUndefined();
    expect(delegationRefusal(input, erin, 'static:frank', ['viewer'])).toBe(
      'cannot hand it to static:frank: they are not known to hold the role approver',
    );
    expect(delegationRefusal(input, erin, 'static:frank', undefined)).toBe(
      'cannot hand it to static:frank: they are not known to hold the role approver',
    );
    expect(delegationRefusal(input, erin, 'static:erin', ['approver'])).toBe('you cannot hand a question to yourself');
    expect(delegationRefusal(input, { principal: 'erin' }, 'oauth:erin', ['approver'])).toBe('you cannot hand a question to yourself');
    expect(delegationRefusal(input, erin, 'static:alice', ['approver'])).toBe('cannot hand it to static:alice: it is their own request');
    expect(delegationRefusal(input, erin, 'static:bob', ['approver'])).toBe(
      'cannot hand it to static:bob: they are excluded from answering it',
    );
    expect(delegationRefusal(input, erin, 'static:carol', ['approver'])).toBe(
      'cannot hand it to static:carol: they have answered or handed it on already',
    );
    // The escalation's role makes someone eligible too.
    const escalating = { ...input, escalation: { roles: ['manager'] } };
    expect(delegationRefusal(escalating, erin, 'static:mia', ['manager'])).toBeUndefined();
    for (const to of [undefined, '', ' ', 'x'.repeat(201), 42]) {
      expect(delegationRefusal(input, erin, to, ['approver'])).toBe('say whom to hand the question to (delegateTo, a principal)');
    }
  });

  test('roles come from a comma-separated list of queryable names, and from a token file third column', () => {
    expect(parseRoles(' a, b ,a,, ', 'X')).toEqual(['a', 'b']);
    expect(parseRoles(undefined, 'X')).toEqual([]);
    expect(() => parseRoles("x,it's", 'MCP_LOCAL_ROLES')).toThrow(`MCP_LOCAL_ROLES: role "it's" must be 1-100 characters`);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'roles-'));
    const file = path.join(dir, 'tokens');
    writeFileSync(file, 'carol carol-token-0123456789 approver,controller\nbob bob-token-0123456789\n');
    const tokens = tokensFromEnv({ MCP_AUTH_TOKENS_FILE: file });
    expect(tokens.callerOf('carol-token-0123456789')).toEqual({ principal: 'carol', roles: ['approver', 'controller'] });
    expect(tokens.callerOf('bob-token-0123456789')).toEqual({ principal: 'bob', roles: [] });
    writeFileSync(file, 'carol carol-token-0123456789 approver bad\n');
    expect(() => tokensFromEnv({ MCP_AUTH_TOKENS_FILE: file })).toThrow(/line 1: write "principal token" or "principal token role,role"/);
  });
});

describe('the task mark', () => {
  test('verifies what it signed (task, principal, tool, input digest, creation) and nothing else; older marks do not pass', () => {
    const marker = new TaskMarker(Buffer.alloc(32, 7));
    const start = {
      workflowId: 'invoice-1',
      principal: 'alice',
      tool: 'process_invoice',
      argumentsDigest: 'd1',
      createdAt: '2026-01-01T00:00:00.000Z',
    };
    const mark = marker.sign(start);
    expect(marker.verify(mark, start)).toBe(true);
    for (const change of [
      { workflowId: 'invoice-2' },
      { principal: 'bob' },
      { tool: 'other' },
      { argumentsDigest: 'd2' },
      { createdAt: '2026-01-01T00:00:01.000Z' },
      { argumentsDigest: undefined },
    ]) {
      expect(marker.verify(mark, { ...start, ...change })).toBe(false);
    }
    expect(marker.verify(`${mark}x`, start)).toBe(false);
    expect(marker.verify(undefined, start)).toBe(false);
    expect(new TaskMarker(Buffer.alloc(32, 8)).verify(mark, start)).toBe(false);
    // A version-1 mark (workflow id, principal and tool only) is refused.
    expect(marker.verify(mark.replace(/^v2\./, ''), start)).toBe(false);
  });

  test('a bound mark says so under its MAC: it does not pass as unbound, nor an unbound one as bound', () => {
    const marker = new TaskMarker(Buffer.alloc(32, 7));
    const start = { workflowId: 'invoice-1', principal: 'alice', tool: 'process_invoice', argumentsDigest: 'd1', createdAt: '2026-01-01' };
    const bound = marker.sign({ ...start, bound: true });
    const unbound = marker.sign(start);
    expect(marker.verify(bound, start)).toBe(true);
    expect(TaskMarker.isBound(bound)).toBe(true);
    expect(TaskMarker.isBound(unbound)).toBe(false);
    expect(marker.verify(bound.replace(/^v3\./, 'v2.'), start)).toBe(false);
    expect(marker.verify(unbound.replace(/^v2\./, 'v3.'), start)).toBe(false);
  });

  test('a run binding holds for its workflow id and run id only, under its own key', () => {
    const marker = new TaskMarker(Buffer.alloc(32, 7));
    const binding = marker.bind('invoice-1', 'run-a');
    expect(marker.verifyBinding(binding, 'invoice-1', 'run-a')).toBe(true);
    expect(marker.verifyBinding(binding, 'invoice-1', 'run-b')).toBe(false);
    expect(marker.verifyBinding(binding, 'invoice-2', 'run-a')).toBe(false);
    expect(marker.verifyBinding({ ...binding, runId: 'run-b' }, 'invoice-1', 'run-b')).toBe(false);
    expect(marker.verifyBinding(undefined, 'invoice-1', 'run-a')).toBe(false);
    expect(new TaskMarker(Buffer.alloc(32, 8)).verifyBinding(binding, 'invoice-1', 'run-a')).toBe(false);
    // A binding is no mark: its MAC is under a key derived for bindings.
    const start = { workflowId: 'invoice-1', principal: 'alice', tool: 'process_invoice', argumentsDigest: 'd1', createdAt: '2026-01-01' };
    expect(binding.proof.slice(3)).not.toBe(marker.sign(start).slice(3));
  });
});

describe('confirmations', () => {
  const confirm = {
    message: 'Pay run of {{count}} invoices for {{ team }}{{missing}}?',
    requestedSchema: { type: 'object' as const, properties: { reason: { type: 'string' as const, minLength: 3 } }, required: ['reason'] },
    into: 'confirmation',
  };
  const tool = { name: 'pay_run' } as WorkflowTool<any, any>;

  test('the question fills in the call’s arguments; a missing one is empty; without fields it is a plain yes or no', () => {
    expect(confirmationRequest(confirm, { count: 42, team: 'AP' }).request).toMatchObject({
      mode: 'form',
      message: 'Pay run of 42 invoices for AP?',
    });
    expect(confirmationRequest({ message: 'Go?' }, {}).request).toEqual({
      mode: 'form',
      message: 'Go?',
      requestedSchema: { type: 'object', properties: {} },
    });
  });

  test('accept with fitting fields starts with them in the input; extra fields are dropped; without into the input is unchanged', () => {
    expect(applyConfirmation(confirm, { count: 1 }, { action: 'accept', content: { reason: 'month end', extra: 1 } })).toEqual({
      kind: 'start',
      input: { count: 1, confirmation: { reason: 'month end' } },
    });
    expect(applyConfirmation({ message: 'Go?' }, { count: 1 }, { action: 'accept' })).toEqual({ kind: 'start', input: { count: 1 } });
  });

  test('a question asked again says what was wrong as one sentence, the same in both generations', () => {
    expect(previousAnswerProblem('reason is required')).toBe('Your previous answer could not be used: reason is required.\n\n');
    expect(previousAnswerProblem('reason is required.')).toBe('Your previous answer could not be used: reason is required.\n\n');
    expect(previousAnswerProblem('is it? ')).toBe('Your previous answer could not be used: is it?\n\n');
  });

  test('decline and cancel start nothing; a bad action or fields that do not fit are asked again', () => {
    expect(applyConfirmation(confirm, {}, { action: 'decline' })).toEqual({ kind: 'declined', action: 'decline' });
    expect(applyConfirmation(confirm, {}, { action: 'cancel' })).toEqual({ kind: 'declined', action: 'cancel' });
    expect(applyConfirmation(confirm, {}, { action: 'maybe' })).toMatchObject({ kind: 'invalid' });
    expect(applyConfirmation(confirm, {}, { action: 'accept', content: { reason: 'x' } })).toMatchObject({ kind: 'invalid' });
    expect(applyConfirmation(confirm, {}, undefined)).toMatchObject({ kind: 'invalid' });
  });

  test('a declined call is a tool error saying nothing started; a pending one carries its token and question', () => {
    expect(declinedResult(tool, 'decline')).toMatchObject({ isError: true, content: [{ text: expect.stringMatching(/^Not started/) }] });
    const pending = pendingConfirmationResult(tool, confirmationRequest(confirm, { count: 2 }), 'token-1');
    expect(pending.structuredContent).toMatchObject({
      pendingConfirmation: { confirmation: 'token-1', question: { key: 'confirm_start', mode: 'form' } },
    });
    expect(pending.isError).toBeUndefined();
  });
});

describe('CallSeal', () => {
  test('opens what it sealed for the same principal only, until it expires; anything changed is refused', () => {
    const seal = new CallSeal('k'.repeat(32), 60_000);
    const token = seal.seal({ principal: 'alice', tool: 'pay_run', args: { count: 2 } });
    expect(seal.open(token, 'alice')).toEqual({ principal: 'alice', tool: 'pay_run', args: { count: 2 } });
    expect(seal.open(token, 'bob')).toBeUndefined();
    expect(seal.open(`${token}x`, 'alice')).toBeUndefined();
    const [body, mac] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), a: { count: 999 } })).toString(
      'base64url',
    );
    expect(seal.open(`${forged}.${mac}`, 'alice')).toBeUndefined();
    expect(new CallSeal('j'.repeat(32), 60_000).open(token, 'alice')).toBeUndefined();
    expect(seal.open(42, 'alice')).toBeUndefined();
    // The seal's clock is the test's: valid through its ttl, refused the millisecond after.
    let now = 1_000_000;
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => now);
    try {
      const short = new CallSeal('k'.repeat(32), 1_000);
      const soon = short.seal({ principal: 'alice', tool: 'pay_run', args: {} });
      now += 1_000;
      expect(short.open(soon, 'alice')).toEqual({ principal: 'alice', tool: 'pay_run', args: {} });
      now += 1;
      expect(short.open(soon, 'alice')).toBeUndefined();
    } finally {
      clock.mockRestore();
    }
  });
});

describe('quotas', () => {
  test('task operations: a burst of twice the rate passes, the next is -32603 with retryable and retryAfterMs; principals apart; 0 is off', async () => {
    let now = 1_000_000;
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => now);
    try {
      const quotas = new Quotas({} as never, { operationsPerSecond: 5 });
      for (let i = 0; i < 10; i++) await quotas.takeOperation('alice');
      let refused: JsonRpcFailure | undefined;
      try {
        await quotas.takeOperation('alice');
      } catch (error) {
        expect(error).toBeInstanceOf(TooManyRequestsError);
        refused = jsonRpcFailureOf(error);
      }
      expect(refused?.code).toBe(ErrorCode.InternalError);
      expect(refused?.data).toMatchObject({ retryable: true, limit: 5 });
      expect((refused?.data as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(0);
      await quotas.takeOperation('bob');
      now += 1_000;
      for (let i = 0; i < 5; i++) await quotas.takeOperation('alice');
      await expect(quotas.takeOperation('alice')).rejects.toThrow(TooManyRequestsError);
      const off = new Quotas({} as never, { operationsPerSecond: 0 });
      for (let i = 0; i < 1000; i++) await off.takeOperation('alice');
    } finally {
      clock.mockRestore();
    }
  });

  test('task operations with a shared state: tokens taken a tenth of a second ahead, spent within a second', async () => {
    let now = 1_000_000;
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => now);
    const asked: number[] = [];
    const shared = fakeSharedState({
      takeTokens: async (_principal: string, _rate: number, _burst: number, want: number) => {
        asked.push(want);
        return { taken: want };
      },
    });
    try {
      const quotas = new Quotas({} as never, { operationsPerSecond: 50 }, shared);
      for (let i = 0; i < 10; i++) await quotas.takeOperation('alice');
      expect(asked).toEqual([5, 5]);
      // Held tokens are spent within a second, then asked for again.
      await quotas.takeOperation('alice');
      now += 1_001;
      await quotas.takeOperation('alice');
      expect(asked).toEqual([5, 5, 5, 5]);
    } finally {
      clock.mockRestore();
    }
  });

  test('a shared bucket that refused is not asked again until it has a token, and one principal asks it one question at a time', async () => {
    let now = 1_000_000;
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => now);
    let asked = 0;
    let inFlight = 0;
    let mostInFlight = 0;
    let empty = false;
    const shared = fakeSharedState({
      takeTokens: async (_principal: string, _rate: number, _burst: number, want: number) => {
        asked++;
        mostInFlight = Math.max(mostInFlight, ++inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight--;
        return empty ? { waitMs: 400 } : { taken: want };
      },
    });
    try {
      const quotas = new Quotas({} as never, { operationsPerSecond: 10 }, shared);
      // A flood of one caller at once: one question of the shared state at a time, however many requests.
      await Promise.all(Array.from({ length: 50 }, () => quotas.takeOperation('mallory')));
      expect(mostInFlight).toBe(1);
      expect(asked).toBe(50);
      // Refused: the next requests within the wait cost the database nothing.
      empty = true;
      await expect(quotas.takeOperation('mallory')).rejects.toThrow(TooManyRequestsError);
      const refusedAfter = asked;
      const answers = await Promise.allSettled(Array.from({ length: 200 }, () => quotas.takeOperation('mallory')));
      expect(answers.every((answer) => answer.status === 'rejected')).toBe(true);
      expect(asked).toBe(refusedAfter);
      // Once the wait is over it is asked again.
      now += 401;
      empty = false;
      await quotas.takeOperation('mallory');
      expect(asked).toBe(refusedAfter + 1);
    } finally {
      clock.mockRestore();
    }
  });

  test('task operations and waits with a shared state that cannot be reached: counted in this process, as without one', async () => {
    const unreachable = unreachableSharedState();
    const quotas = new Quotas({} as never, { operationsPerSecond: 5, maxWaits: 1 }, unreachable);
    for (let i = 0; i < 10; i++) await quotas.takeOperation('alice');
    await expect(quotas.takeOperation('alice')).rejects.toThrow(TooManyRequestsError);
    await quotas.beginWait('alice');
    await expect(quotas.beginWait('alice')).rejects.toThrow(/Too many waits/);
  });

  test('waits: at most the limit at once; ending one (twice changes nothing) frees one place', async () => {
    const quotas = new Quotas({} as never, { maxWaits: 2 });
    const first = await quotas.beginWait('alice');
    await quotas.beginWait('alice');
    await expect(quotas.beginWait('alice')).rejects.toThrow(/Too many waits/);
    first();
    first();
    const third = await quotas.beginWait('alice');
    await expect(quotas.beginWait('alice')).rejects.toThrow(TooManyRequestsError);
    third();
  });
});

describe('pauses and checks', () => {
  test('a refused answer is asked again after 1 s, 2 s, 4 s … at most 30 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 20].map(refusalBackoffMs)).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  });

  test('checkFormContent: required fields, types, enums, lengths and bounds', () => {
    const schema = {
      type: 'object' as const,
      properties: {
        decision: { type: 'string' as const, enum: ['approve', 'reject'] },
        comment: { type: 'string' as const, maxLength: 5 },
        amount: { type: 'number' as const, minimum: 1, maximum: 10 },
        urgent: { type: 'boolean' as const },
      },
      required: ['decision'],
    };
    expect(checkFormContent(schema, { decision: 'approve', comment: 'ok', amount: 5, urgent: true })).toBeUndefined();
    expect(checkFormContent(schema, {})).toBeDefined();
    expect(checkFormContent(schema, { decision: 'maybe' })).toBeDefined();
    expect(checkFormContent(schema, { decision: 'approve', comment: 'too long' })).toBeDefined();
    expect(checkFormContent(schema, { decision: 'approve', amount: 11 })).toBeDefined();
    expect(checkFormContent(schema, { decision: 'approve', urgent: 'yes' })).toBeDefined();
    expect(checkFormContent(schema, 'approve')).toBe('the answer must be an object');
  });

  test.each([
    [{ decision: 'approve' }, undefined],
    [{ decision: 'reject', comment: 'no' }, undefined],
    [{}, '"decision" is required'],
    [{ decision: 'maybe' }, '"decision" must be one of approve, reject'],
    [{ decision: 'approve', extra: 1 }, '"extra" is not a field of this form'],
    [{ decision: 'approve', comment: 'x'.repeat(501) }, '"comment" must be at most 500 characters'],
    [{ decision: 7 }, '"decision" must be a string'],
    ['approve', 'the answer must be an object'],
  ])('checkFormContent of a decision form: %j → %s', (content, expected) => {
    expect(checkFormContent(questionRequest('Order 7').requestedSchema, content)).toBe(expected);
  });

  test("checkFormContent takes only the form's own fields, never prototype names, and at most 16 KiB", () => {
    const schema = { type: 'object' as const, properties: { note: { type: 'string' as const } }, required: [] };
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      expect(checkFormContent(schema, JSON.parse(`{"${name}": "x"}`))).toBe(`"${name}" is not a field of this form`);
    }
    expect(checkFormContent({ ...schema, required: ['toString'] }, {})).toBe('"toString" is required');
    expect(checkFormContent(schema, { note: 'x'.repeat(16_000) })).toBeUndefined();
    expect(checkFormContent(schema, { note: 'x'.repeat(900_000) })).toBe('the answer is too long: at most 16384 characters in all');
    expect(formFieldsOf(schema, { note: 'a', constructor: 'b', toString: 'c' })).toEqual({ note: 'a' });
  });

  test('escapeControls writes every control character as an escape and leaves other text alone', () => {
    expect(escapeControls('a\r\nb\tc\x1b[2J\u009b\u2028é')).toBe('a\\r\\nb\\tc\\x1b[2J\\x9b\\x{2028}é');
  });
});

describe('log context', () => {
  test("a request's lines carry its context; work started without it, and what that work awaits, do not", async () => {
    const lines: string[] = [];
    const logger = new Logger({ format: 'text', level: 'info', write: (line) => lines.push(line) });
    let later: Promise<void> = Promise.resolve();
    // The detached work awaits something settled only after the request's context has ended.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    await withLogContext({ principal: 'alice', method: 'tasks/get' }, async () => {
      logger.info('inside');
      later = withoutLogContext(async () => {
        await released;
        logger.info('detached');
      });
    });
    release();
    await later;
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain('principal=alice');
    expect(lines[1]).toContain('detached');
    expect(lines[1]).not.toContain('alice');
    expect(lines[1]).not.toContain('tasks/get');
  });
});

describe('routing by protocol generation', () => {
  const envelope = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const bodies: [string, unknown, Record<string, string>][] = [
    ['a 2026 tasks/get', { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { taskId: 't', _meta: envelope } }, {}],
    ['a 2026 notification', { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, _meta: envelope } }, {}],
    [
      'a claim naming an unknown revision',
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } } },
      {},
    ],
    [
      'a malformed envelope',
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': 7 } } },
      {},
    ],
    [
      'a claim whose headers disagree',
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope } },
      { 'mcp-method': 'tools/call' },
    ],
    ['a claim on a malformed message', { jsonrpc: '1.0', id: 1, method: 'tools/list', params: { _meta: envelope } }, {}],
    [
      'initialize',
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
      },
      {},
    ],
    [
      'initialize with a broken claim',
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': 7 } } },
      {},
    ],
    ['a 2025 tasks/get', { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { taskId: 't' } }, { 'mcp-protocol-version': '2025-11-25' }],
    [
      'a 2026 header without a claim',
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
      { 'mcp-protocol-version': '2026-07-28' },
    ],
    ['a posted response', { jsonrpc: '2.0', id: 1, result: {} }, {}],
    ['a response with a claim', { jsonrpc: '2.0', id: 1, result: { _meta: envelope }, params: { _meta: envelope } }, {}],
    ['a batch', [{ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope } }], {}],
    ['null', null, {}],
    [
      'a _meta that is an array',
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: ['io.modelcontextprotocol/protocolVersion'] } },
      {},
    ],
  ];

  test.each(bodies)('the shortcut never calls modern what the SDK calls legacy: %s', async (_name, body, headers) => {
    const request = new Request('http://localhost/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    const legacy = await isLegacyRequest(request, body);
    if (claimsModernEnvelope(body)) expect(legacy).toBe(false);
  });

  test('the shortcut takes the messages that carry a claim, and nothing else', () => {
    const taken = bodies.filter(([, body]) => claimsModernEnvelope(body)).map(([name]) => name);
    expect(taken).toEqual([
      'a 2026 tasks/get',
      'a 2026 notification',
      'a claim naming an unknown revision',
      'a malformed envelope',
      'a claim whose headers disagree',
      'a claim on a malformed message',
    ]);
  });
});
