import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@outrigger/control-plane';
import { parse } from 'yaml';
import { z } from 'zod';

export const WORKFLOWS_DIR = join(repoRoot(), '.github', 'workflows');
const TABLE_FILE = join(repoRoot(), 'tools', 'workflows', 'action-runtimes.yaml');

const NodeRuntime = z.enum(['node12', 'node16', 'node20', 'node24']);
const ActionRuntimes = z.strictObject({
  nodeEndOfLife: z.record(NodeRuntime, z.iso.date()),
  actions: z.record(z.string().regex(/^[\w.-]+\/[\w./-]+@v\d+$/), z.strictObject({ using: z.union([NodeRuntime, z.enum(['composite', 'docker'])]), checked: z.string() })),
});
export type ActionRuntimes = z.infer<typeof ActionRuntimes>;

export function readActionRuntimes(file = TABLE_FILE): ActionRuntimes {
  return ActionRuntimes.parse(parse(readFileSync(file, 'utf8'), { schema: 'failsafe' }));
}

export function workflowFiles(dir = WORKFLOWS_DIR): string[] {
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .map((f) => join(dir, f));
}

interface Step {
  readonly uses?: string;
  readonly name?: string;
  readonly with?: Readonly<Record<string, string>>;
}
interface Workflow {
  readonly jobs?: Record<string, { readonly uses?: string; readonly steps?: readonly Step[] }>;
}

/** Every step of every job of a workflow, in order. */
export function workflowSteps(file: string): Step[] {
  const workflow = parse(readFileSync(file, 'utf8')) as Workflow;
  return Object.values(workflow.jobs ?? {}).flatMap(({ steps = [] }) => steps);
}

/**
 * What is wrong with the actions a workflow uses on `day` (YYYY-MM-DD): each `uses:` of another
 * repository must be in the table, and none may run on a Node past its end of life. Local actions
 * (./) and container images (docker://) run no Node of GitHub's.
 */
export function actionFindings(file: string, table: ActionRuntimes, day: string): string[] {
  const workflow = parse(readFileSync(file, 'utf8')) as Workflow;
  return Object.entries(workflow.jobs ?? {}).flatMap(([job, { steps = [] }]) =>
    steps.flatMap((step, index) => {
      const uses = step.uses;
      if (!uses || uses.startsWith('./') || uses.startsWith('docker://')) return [];
      const where = `${file}: job ${job}, step ${step.name ?? index + 1}: ${uses}`;
      const runtime = table.actions[uses];
      if (!runtime) return [`${where} is not in tools/workflows/action-runtimes.yaml (add it with its action.yml's runs.using, or use a major that is)`];
      const endOfLife = runtime.using in table.nodeEndOfLife ? table.nodeEndOfLife[runtime.using as z.infer<typeof NodeRuntime>] : undefined;
      return endOfLife !== undefined && endOfLife <= day ? [`${where} runs on ${runtime.using}, past its end of life (${endOfLife})`] : [];
    }),
  );
}
