import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadProfilesFile, REFERENCE_PROFILE_FILE } from '@outrigger/agent-profiles';
import { injectManifests } from '@outrigger/sidecar';
import { INJECTOR_VERSION } from './config/version.js';

const usage = `usage: kube-inject [-f FILE|-] [--profiles FILE] [--namespace NS]
Reads Kubernetes YAML (Pod, Deployment, StatefulSet, DaemonSet, Job, CronJob, ReplicaSet; several
documents allowed) and writes it to stdout with the agent injected into the opted-in pod templates,
exactly as the webhook would. --profiles takes AgentProfile YAML (e.g. kubectl get agentprofiles -o yaml);
without it, the reference profile deploy/base/profiles/xxl-job.yaml is used.`;

/** Offline injection (like istioctl kube-inject): the webhook's own code path, on files. */
async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      filename: { type: 'string', short: 'f', default: '-' },
      profiles: { type: 'string' },
      namespace: { type: 'string', short: 'n' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  const profiles = await loadProfilesFile(values.profiles || REFERENCE_PROFILE_FILE);
  if (!profiles.ok) return fail(`profiles: ${profiles.error}`);
  const input = readFileSync(!values.filename || values.filename === '-' ? 0 : values.filename, 'utf8');
  const result = injectManifests(input, {
    profiles: profiles.value,
    injectorVersion: INJECTOR_VERSION,
    ...(values.namespace ? { defaultNamespace: values.namespace } : {}),
  });
  if (!result.ok) return fail(result.error);
  result.value.warnings.forEach((w) => process.stderr.write(`warning: ${w}\n`));
  process.stdout.write(result.value.yaml);
  return 0;
}

function fail(message: string): number {
  process.stderr.write(`kube-inject: ${message}\n`);
  return 1;
}

process.exitCode = await main().catch((error: Error) => fail(error.message));
