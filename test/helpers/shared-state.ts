/** A replica shared state for unit tests: every call answers yes (nothing taken, nothing written), unless `overrides` say otherwise. */
import type { ReplicaSharedState } from '../../src/core/shared-state';

export function fakeSharedState(overrides: Partial<ReplicaSharedState> = {}): ReplicaSharedState {
  return {
    takeTokens: async (_principal: string, _rate: number, _burst: number, want: number) => ({ taken: want }),
    noteCreated: async () => undefined,
    createdWithin: async () => [],
    useOnce: async () => true,
    noteWrite: async () => undefined,
    writtenSince: async () => false,
    beginWait: async () => undefined,
    reserveTask: async () => ({ open: 0 }),
    location: () => 'the shared state of a test',
    close: async () => undefined,
    ...overrides,
  };
}

/** A shared state that cannot be reached: every call fails as a refused connection would. */
export function unreachableSharedState(): ReplicaSharedState {
  const refused = () => Promise.reject(new Error('connection refused'));
  return {
    takeTokens: refused,
    noteCreated: refused,
    createdWithin: refused,
    useOnce: refused,
    noteWrite: refused,
    writtenSince: refused,
    beginWait: refused,
    reserveTask: refused,
    location: () => 'the shared state of postgres://nowhere/',
    close: () => Promise.resolve(),
  };
}
