/** What `serve` offers: the default tools, the example's sample tools when asked for, a tools file's tools, and name clashes. */
import path from 'node:path';
import { z } from 'zod';
import { loadSampleTools, servedTools } from '../../src/mcp/serve/served-tools';
import { ToolsFileError } from '../../src/mcp/tools/config-file';
import { defineWorkflowTool } from '../../src/mcp/tools/define';

const GENERIC = ['task_status', 'task_result', 'task_respond', 'task_cancel', 'task_find', 'approvals_inbox', 'approvals_answer'];
const SAMPLES = ['process_invoice', 'release_scheduled_payment', 'submit_expense_report', 'request_spend_approval'];

const declared = (name: string) =>
  defineWorkflowTool({ name, description: 'A declared tool.', workflowType: 'someWorkflow', inputSchema: z.object({}) });

const names = (tools: readonly { name: string }[]) => tools.map((tool) => tool.name);

describe('servedTools', () => {
  test('without the samples: the companion and approval tools, then the declared ones', () => {
    expect(names(servedTools({ declared: [declared('greet')] }))).toEqual([...GENERIC, 'greet']);
  });

  test('with the samples: the sample tools first, as npm run serve listed them before the samples were opt-in', () => {
    expect(names(servedTools({ samples: loadSampleTools(), declared: [declared('greet')] }))).toEqual([...SAMPLES, ...GENERIC, 'greet']);
  });

  test('a declared tool named like a served built-in tool is refused with a ToolsFileError naming the file and the tool', () => {
    const call = () => servedTools({ declared: [declared('task_status')], file: 'tools.yaml' });
    expect(call).toThrow(ToolsFileError);
    expect(call).toThrow('tools.yaml: tool "task_status" is already a built-in tool; pick another name');
    expect(() => servedTools({ samples: loadSampleTools(), declared: [declared('process_invoice')], file: 'tools.yaml' })).toThrow(
      'tools.yaml: tool "process_invoice" is already a built-in tool',
    );
  });

  test("in a checkout the sample tools are the example package's, resolved by its name to examples/invoice-approval", () => {
    expect(names(loadSampleTools())).toEqual(SAMPLES);
    expect(require.resolve('invoice-approval-example/tools')).toBe(
      path.join(__dirname, '..', '..', 'examples', 'invoice-approval', 'src', 'tools', 'index.ts'),
    );
  });

  test("a sample's name is free for a declared tool when the samples are not served", () => {
    expect(names(servedTools({ declared: [declared('process_invoice')] }))).toEqual([...GENERIC, 'process_invoice']);
  });
});
