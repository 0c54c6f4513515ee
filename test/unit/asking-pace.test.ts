import { AskingPace, refusalBackoffMs } from '../../src/mcp/mcp2025/asking-pace';
import type { PendingInput } from '../../src/contract/task-contract';

function question(key: string): PendingInput {
  return {
    key,
    request: { mode: 'form', message: `What about ${key}?`, requestedSchema: { type: 'object', properties: {} } },
  };
}

const DISMISS_PAUSE_MS = 60_000;

/** A pace on a clock the test moves. */
function paceAt(start = 1_000_000) {
  let now = start;
  const pace = new AskingPace(DISMISS_PAUSE_MS, () => now);
  return { pace, advance: (ms: number) => (now += ms) };
}

/** Which question `next` asks for `open`, or what else it says. */
function asked(pace: AskingPace, open: PendingInput[]): string {
  const next = pace.next(open);
  return next.kind === 'ask' ? next.input.key : next.kind === 'pause' ? `pause ${next.waitMs}` : 'none';
}

describe('the pace of one tasks/result (2025-11-25)', () => {
  const taxId = question('tax-id');
  const bank = question('bank-account');

  test('questions are asked in the order the workflow asked them; nothing open, nothing asked', () => {
    const { pace } = paceAt();
    expect(asked(pace, [taxId, bank])).toBe('tax-id');
    expect(asked(pace, [])).toBe('none');
  });

  test('a dismissed question lets the next be asked at once; once each was dismissed, none is asked until the pause after the latest dismissal', () => {
    const { pace, advance } = paceAt();
    pace.dismissedOne('tax-id');
    expect(asked(pace, [taxId, bank])).toBe('bank-account');
    advance(10_000);
    pace.dismissedOne('bank-account');
    // The pause is the task's: the first dismissal's own pause is not what ends it.
    expect(asked(pace, [taxId, bank])).toBe(`pause ${DISMISS_PAUSE_MS}`);
    advance(DISMISS_PAUSE_MS - 10_000);
    expect(asked(pace, [taxId, bank])).toBe('pause 10000');
    advance(10_000);
    expect(asked(pace, [taxId, bank])).toBe('tax-id');
  });

  test('a client that dismisses everything is asked each question once per pause, however often the task is read', () => {
    const { pace, advance } = paceAt();
    const seen: string[] = [];
    for (let step = 0; step < 1_000; step++) {
      const next = pace.next([taxId, bank]);
      if (next.kind === 'ask') {
        seen.push(next.input.key);
        pace.dismissedOne(next.input.key);
      }
      advance(100);
    }
    // 100 s of reads every 100 ms: the two questions, then both again once the pause had passed.
    expect(seen).toEqual(['tax-id', 'bank-account', 'tax-id', 'bank-account']);
  });

  test('a question the workflow adds during the pause is asked at once; a dismissed single question waits for the pause', () => {
    const { pace, advance } = paceAt();
    pace.dismissedOne('tax-id');
    expect(asked(pace, [taxId])).toBe(`pause ${DISMISS_PAUSE_MS}`);
    expect(asked(pace, [taxId, bank])).toBe('bank-account');
    advance(DISMISS_PAUSE_MS);
    expect(asked(pace, [taxId])).toBe('tax-id');
  });

  test('after a refused answer nothing is asked for a pause that grows with each refusal in a row; an answer resets it', () => {
    const { pace, advance } = paceAt();
    pace.refused();
    expect(asked(pace, [taxId, bank])).toBe(`pause ${refusalBackoffMs(1)}`);
    advance(refusalBackoffMs(1));
    expect(asked(pace, [taxId, bank])).toBe('tax-id');
    pace.refused();
    expect(asked(pace, [taxId])).toBe(`pause ${refusalBackoffMs(2)}`);
    advance(refusalBackoffMs(2));
    pace.settled();
    pace.refused();
    expect(asked(pace, [taxId])).toBe(`pause ${refusalBackoffMs(1)}`);
  });
});
