import { parseArgs } from 'node:util';
import { inParallel, isNotFound, type KubeClient, kubeJson, parseDuration, resourcePath } from '@outrigger/kube';
import { filterRows } from './agents/agent-report.js';
import { RESTARTABLE_KINDS, type WorkloadRef, workloadKey, workloadName } from './agents/workload-owner.js';
import { SCAN_OPTIONS, scanWithProgress } from './agents.command.js';
import { type CommandIo, UsageError } from './command-io.js';
import { cliKubeClient } from './kube-client.js';
import { planRestarts, restartPatch, type RestartTarget } from './rollout/restart-plan.js';
import { rolloutStatus, type RolloutStatus } from './rollout/rollout-status.js';

const DEFAULT_IN_FLIGHT = 3;
const DEFAULT_TIMEOUT = '10m';

export const rolloutUsage = `usage: outrigger rollout restart (--outdated | --missing | both) (-n NS | -A) [--profile NAME]
                                [--max-in-flight N] [--timeout 10m] [--dry-run] [--kubeconfig FILE]
Restarts the workloads whose live opted-in pods run an outdated agent (--outdated) or none
(--missing), as kubectl rollout restart does (the kubectl.kubernetes.io/restartedAt pod-template
annotation): each workload's own strategy and PodDisruptionBudgets apply. At most N rollouts at
once (${DEFAULT_IN_FLIGHT} by default), each waited for until done, failed or past --timeout (${DEFAULT_TIMEOUT}). Bare pods, Jobs and
CronJobs (their next run gets the agent), paused workloads and those already rolling are skipped,
with the reason. Exits 1 when a rollout fails or times out. --dry-run prints the plan only.`;

const POLL_MS = 1_000;
const RESOURCES: Readonly<Record<string, string>> = { Deployment: 'deployments', StatefulSet: 'statefulsets', DaemonSet: 'daemonsets' };

type Outcome = 'restarted' | 'failed' | 'timed out';

export async function rolloutCommand(args: readonly string[], io: CommandIo): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === '--help' || sub === '-h' || sub === undefined) return io.out(`${rolloutUsage}\n`), 0;
  if (sub !== 'restart') throw new UsageError(`unknown subcommand ${JSON.stringify(sub)}: only restart`);
  const { values } = parseArgs({
    args: rest,
    options: { ...SCAN_OPTIONS, 'max-in-flight': { type: 'string', default: String(DEFAULT_IN_FLIGHT) }, timeout: { type: 'string', default: DEFAULT_TIMEOUT }, 'dry-run': { type: 'boolean' } },
  });
  if (values.help) return io.out(`${rolloutUsage}\n`), 0;
  if (!values.outdated && !values.missing) throw new UsageError('say what to restart: --outdated, --missing or both');
  if ((values.namespace === undefined) === (values['all-namespaces'] !== true)) throw new UsageError('say where: -n NAMESPACE or -A (all namespaces), one of them');
  const maxInFlight = Number(values['max-in-flight']);
  if (!Number.isInteger(maxInFlight) || maxInFlight < 1) throw new UsageError(`--max-in-flight must be a whole number of at least 1, got ${JSON.stringify(values['max-in-flight'])}`);
  const timeoutMs = parseTimeout(values.timeout);

  const kc = cliKubeClient(values.kubeconfig);
  const scan = await scanWithProgress(io, values);
  const rows = filterRows(scan.rows, { outdated: values.outdated === true, missing: values.missing === true });
  const behind = new Map<string, { workload: WorkloadRef; pods: number }>();
  for (const r of rows) {
    const entry = behind.get(workloadKey(r.workload)) ?? { workload: r.workload, pods: 0 };
    entry.pods += (values.outdated ? r.outdated : 0) + (values.missing ? r.missing : 0);
    behind.set(workloadKey(r.workload), entry);
  }
  const targets: RestartTarget[] = await Promise.all([...behind.values()].map(async (b) => ({ ...b, object: await readWorkload(kc, b.workload) })));
  const plan = planRestarts(targets);
  const what = [values.outdated && 'an outdated agent', values.missing && 'no agent'].filter(Boolean).join(' or ');
  const toRestart = plan.filter((d) => d.action === 'restart').map((d) => d.target);
  const skipped = plan.flatMap((d) => (d.action === 'skip' ? [d] : []));
  io.out(`${scan.pods} opted-in pods looked at; ${[...behind.values()].reduce((n, b) => n + b.pods, 0)} run ${what}, in ${plan.length} workload(s)\n`);
  for (const s of skipped) io.out(`skip     ${describe(s.target)}: ${s.reason}\n`);
  if (values['dry-run']) {
    for (const t of toRestart) io.out(`would restart ${describe(t)}\n`);
    io.out(`\ndry run: would restart ${toRestart.length}, skip ${skipped.length}\n`);
    return 0;
  }

  const outcomes: Outcome[] = [];
  const say = (text: string) => {
    io.progress?.('');
    io.out(text);
  };
  const rolling = new Map<string, string>();
  const showProgress = () => io.progress?.(`${outcomes.length} of ${toRestart.length} done; rolling: ${[...rolling.entries()].map(([w, m]) => `${w} (${m})`).join(', ')}`);
  let started = 0;
  // Each rollout's failure is its outcome: none is thrown, so every rollout gets its turn.
  await inParallel(toRestart, maxInFlight, async (target) => {
    const name = `${target.workload.namespace}/${workloadName(target.workload)}`;
    say(`restart  ${describe(target)} [${++started}/${toRestart.length}]\n`);
    const startedAt = Date.now();
    const outcome = await restartAndWait(kc, target.workload, timeoutMs, (status) => {
      rolling.set(name, status.message);
      showProgress();
    }).catch((error: unknown): { outcome: Outcome; message: string } => ({ outcome: 'failed', message: error instanceof Error ? error.message : String(error) }));
    rolling.delete(name);
    outcomes.push(outcome.outcome);
    const seconds = Math.round((Date.now() - startedAt) / 1_000);
    say(`${outcome.outcome === 'restarted' ? 'done    ' : outcome.outcome === 'failed' ? 'FAILED  ' : 'TIMEOUT '} ${name}: ${outcome.message} (${seconds} s)\n`);
  });
  io.progress?.('');
  const count = (o: Outcome) => outcomes.filter((x) => x === o).length;
  const bad = count('failed') + count('timed out');
  io.out(`\nrestarted ${count('restarted')}, failed ${count('failed')}, timed out ${count('timed out')}, skipped ${skipped.length}\n`);
  return bad === 0 ? 0 : 1;
}

function describe(t: RestartTarget): string {
  return `${t.workload.namespace}/${workloadName(t.workload)} (${t.pods} pod${t.pods === 1 ? '' : 's'})`;
}

async function readWorkload(kc: KubeClient, w: WorkloadRef): Promise<Record<string, unknown> | undefined> {
  const resource = RESOURCES[w.kind];
  if (!w.known || !resource || !(RESTARTABLE_KINDS as readonly string[]).includes(w.kind)) return undefined;
  try {
    return await kubeJson<Record<string, unknown>>(kc, { path: resourcePath({ apiVersion: 'apps/v1', resource, namespace: w.namespace, name: w.name }) });
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** Patches the pod template as kubectl rollout restart does, then waits for the rollout as kubectl rollout status does. */
async function restartAndWait(kc: KubeClient, w: WorkloadRef, timeoutMs: number, onStatus: (status: RolloutStatus) => void): Promise<{ outcome: Outcome; message: string }> {
  const path = resourcePath({ apiVersion: 'apps/v1', resource: RESOURCES[w.kind] ?? '', namespace: w.namespace, name: w.name });
  await kubeJson(kc, { method: 'PATCH', path, body: restartPatch(new Date()), contentType: 'application/strategic-merge-patch+json', query: { fieldManager: 'outrigger-rollout-restart' } });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = rolloutStatus(w.kind, await kubeJson(kc, { path }));
    if (status.state === 'done') return { outcome: 'restarted', message: status.message };
    if (status.state === 'failed') return { outcome: 'failed', message: status.message };
    onStatus(status);
    if (Date.now() >= deadline) return { outcome: 'timed out', message: `still rolling after ${timeoutMs / 1_000} s: ${status.message}` };
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** `90s`, `10m`, `1h30m`: a duration as the services take them, above 0. */
export function parseTimeout(text: string): number {
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch (error) {
    throw new UsageError(`--timeout: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (ms <= 0) throw new UsageError(`--timeout must be above 0, got ${JSON.stringify(text)}`);
  return ms;
}
