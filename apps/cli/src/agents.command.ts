import { parseArgs } from 'node:util';
import { INSTALL_NAMES } from '@outrigger/install';
import { filterRows, type WorkloadAgents } from './agents/agent-report.js';
import { type AgentScan, scanAgents } from './agents/agent-scan.reader.js';
import { workloadName } from './agents/workload-owner.js';
import { type CommandIo, UsageError } from './command-io.js';
import { cliKubeClient } from './kube-client.js';

export const agentsUsage = `usage: outrigger agents [-n NS | -A] [--profile NAME] [--outdated] [--missing] [--output text|json] [--kubeconfig FILE]
One row per workload (Deployment, StatefulSet, DaemonSet, Job, CronJob, bare pod, ...) and profile:
how many of its live pods that opted in run the agent the profile injects today (current), one
from an earlier spec (outdated), or none (missing), and the specs (revisions) their agents came
from. "N not from the injector": pods whose agent the injector cannot have written (not exactly
that spec's, or created after the rbac-syncer's SPEC_CHANGE_LAG had passed since the spec was
replaced): they keep no RBAC. Pods in namespaces the webhook injects in (labelled
outrigger.dev/injection=enabled, not a system one): all of them unless -n. --outdated and
--missing keep the rows with such pods.
--install-namespace NS names where the rbac-syncer keeps earlier specs (${INSTALL_NAMES.namespace}).`;

/** Flags `agents` and `rollout restart` share: which pods to look at. */
export const SCAN_OPTIONS = {
  kubeconfig: { type: 'string' },
  namespace: { type: 'string', short: 'n' },
  'all-namespaces': { type: 'boolean', short: 'A' },
  profile: { type: 'string' },
  outdated: { type: 'boolean' },
  missing: { type: 'boolean' },
  'install-namespace': { type: 'string', default: INSTALL_NAMES.namespace },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function agentsCommand(args: readonly string[], io: CommandIo): Promise<number> {
  const { values } = parseArgs({ args: [...args], options: { ...SCAN_OPTIONS, output: { type: 'string', short: 'o', default: 'text' } } });
  if (values.help) return io.out(`${agentsUsage}\n`), 0;
  if (values.output !== 'text' && values.output !== 'json') throw new UsageError(`--output must be text or json, got ${JSON.stringify(values.output)}`);
  if (values.namespace !== undefined && values['all-namespaces']) throw new UsageError('-n and -A exclude each other');
  const scan = await scanWithProgress(io, values);
  const rows = filterRows(scan.rows, { outdated: values.outdated === true, missing: values.missing === true });
  if (values.output === 'json') {
    io.out(`${JSON.stringify({ profiles: scan.profiles, specChangeLag: scan.specChangeLag, refused: scan.refused, pods: scan.pods, workloads: rows.map(jsonRow) }, null, 2)}\n`);
    return 0;
  }
  for (const r of scan.refused) io.err(`AgentProfile ${r.name} is refused (${r.error}): its pods are not judged\n`);
  if (rows.length === 0) {
    io.out(`no workload ${values.outdated || values.missing ? 'matches' : 'has opted-in pods'} (${scan.pods} opted-in pods looked at)\n`);
    return 0;
  }
  io.out(table(['NAMESPACE', 'WORKLOAD', 'PROFILE', 'PODS', 'CURRENT', 'OUTDATED', 'MISSING', 'REVISIONS'], rows.map(textRow)));
  if (rows.some((r) => r.revisions.some((v) => v.known && v.notInjected > 0))) io.err(`earlier specs' agents were judged with ${scan.specChangeLag.from}\n`);
  return 0;
}

/** Scans with a progress line on a terminal. */
export async function scanWithProgress(
  io: CommandIo,
  values: { readonly kubeconfig?: string | undefined; readonly namespace?: string | undefined; readonly profile?: string | undefined; readonly 'install-namespace': string },
): Promise<AgentScan> {
  const kc = cliKubeClient(values.kubeconfig);
  try {
    return await scanAgents(kc, {
      namespace: values.namespace,
      profile: values.profile,
      installNamespace: values['install-namespace'],
      onProgress: io.progress && ((pods, owners) => io.progress?.(`looked at ${pods} pods, ${owners} owner(s) of opted-in pods so far`)),
    });
  } finally {
    io.progress?.('');
  }
}

function jsonRow(r: WorkloadAgents) {
  const { workload, ...rest } = r;
  return { namespace: workload.namespace, kind: workload.kind, name: workload.name, apiVersion: workload.apiVersion, ...rest };
}

function textRow(r: WorkloadAgents): string[] {
  const revisions = r.revisions.map((v) => `${v.hash}${v.current ? ' (in force)' : v.known ? '' : ' (unknown spec)'}: ${v.pods}${v.known && v.notInjected > 0 ? ` (${v.notInjected} not from the injector)` : ''}`).join(', ');
  return [r.workload.namespace, workloadName(r.workload), r.profile, String(r.pods), String(r.current), String(r.outdated), String(r.missing), revisions || '-'];
}

/** Columns padded to their widest cell, kubectl style. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  return [header, ...rows].map((cells) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('   ')).join('\n') + '\n';
}
