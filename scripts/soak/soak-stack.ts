import type { Client } from '@temporalio/client';
import type { PublishedTaskState } from '../../src/contract/task-contract';
import type { Managed } from '../lib/processes';
import type { FaultableNetwork } from './network-faults';

/** Someone with a static bearer token of the stack's MCP server. */
export interface StackPerson {
  principal: string;
  token: string;
}

/** The role whose holders approve the soak's invoices (the workers' INVOICE_APPROVER_ROLE). */
export const SOAK_APPROVER_ROLE = 'ap-approver';

/** What the soak needs of a stack: the dev-server rig, or the production-shaped cluster. */
export interface SoakStack {
  readonly dir: string;
  readonly ledgerDir: string;
  /** The folder of signed decision records every MCP server appends to and every worker checks before a payment. */
  readonly decisionStore: string;
  readonly taskQueue: string;
  readonly client?: Client;
  /** The MCP endpoint (Streamable HTTP) the approvers call. */
  readonly mcpUrl: string;
  /** What can be killed besides a client (`client` is always a victim). */
  readonly victims: readonly string[];
  /** The links faults can be injected into; none on a stack without Toxiproxy. */
  readonly network?: FaultableNetwork;
  up(): Promise<void>;
  down(keep: boolean): Promise<void>;
  /** The person who submits the invoices and releases their scheduled line items: the one {@link clientProcess} acts as. */
  submitter(): StackPerson;
  /** Holders of {@link SOAK_APPROVER_ROLE} (at least two), none of them the submitter. */
  approvers(): StackPerson[];
  /** A CLI client acting as the {@link submitter}. */
  clientProcess(stateDir: string, args: string[], answersFile: string, logFile: string, answerDelayMs?: number): Managed;
  state(taskId: string): Promise<{ published?: PublishedTaskState; closed: boolean } | undefined>;
  mark(text: string): void;
  /** Kills `victim` (with the clients `alsoKilling` kills), restarts it, resolves once it serves again. */
  killAndRestart(victim: string, alsoKilling: Promise<unknown>[]): Promise<void>;
}
