/**
 * A bridge replica in the test process on a Temporal connection of its own, whose requests to Temporal are counted,
 * served over Streamable HTTP: what the read tests measure a replica's cost to Temporal by.
 */
import { InterceptingCall } from '@grpc/grpc-js';
import type { Bridge } from '../../src/mcp/bridge';
import type { BridgeTuning } from '../../src/mcp/bridge/bridge-options';
import type { RunningHttpServer } from '../../src/mcp/transports/http';
import { FAST_TUNING } from './mcp';
import { testAddress } from './temporal';
import type { StackFiles } from './stack-app';
import type { TestStack } from './test-stack';

/** One replica: a bridge whose requests to Temporal are counted, served over HTTP. */
export interface CountedReplica {
  bridge: Bridge;
  http: RunningHttpServer;
  /** Requests to Temporal by method name (DescribeWorkflowExecution, GetWorkflowExecutionHistory, …). */
  requests: Map<string, number>;
}

/** Options of {@link countedReplica}. */
export interface CountedReplicaOptions {
  /** The principal of every request, and the local one. */
  principal: string;
  /** Default {@link FAST_TUNING}; the rate limit is always off. */
  tuning?: BridgeTuning;
  /** Where it reaches Temporal; default the run's dev server. */
  address?: string;
  taskQueue?: string;
}

/** A replica of `stack`'s bridge (see the module's comment). */
export async function countedReplica(stack: TestStack<StackFiles>, options: CountedReplicaOptions): Promise<CountedReplica> {
  const { principal, tuning = FAST_TUNING, address = testAddress(), taskQueue } = options;
  const requests = new Map<string, number>();
  const bridge = await stack.addBridge({
    ...(taskQueue && { taskQueue }),
    connection: {
      address,
      interceptors: [
        (call, next) => {
          const method = String(call.method_definition.path).split('/').pop()!;
          requests.set(method, (requests.get(method) ?? 0) + 1);
          return new InterceptingCall(next(call));
        },
      ],
    },
    tuning: { ...tuning, core: { ...tuning.core, quotas: { operationsPerSecond: 0 } } },
    principal,
    localPrincipal: principal,
    // What is counted is the reads' cost: the close keeper's own queries are not theirs.
    closeKeeper: false,
  });
  return { bridge, http: await stack.serve(bridge), requests };
}

/** Reads of a task's state a replica made: describes and history pages (the watches' long polls among them). */
export function stateReads(of: CountedReplica): { describes: number; history: number } {
  return {
    describes: of.requests.get('DescribeWorkflowExecution') ?? 0,
    history: (of.requests.get('GetWorkflowExecutionHistoryReverse') ?? 0) + (of.requests.get('GetWorkflowExecutionHistory') ?? 0),
  };
}
