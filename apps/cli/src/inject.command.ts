import { parseArgs } from 'node:util';
import YAML from 'yaml';
import { loadProfilesFile, parseProfiles, REFERENCE_PROFILE_FILE } from '@outrigger/agent-profiles';
import { describeDocument, type DocumentOutcome, injectManifests, type ManifestInjection, UNSUPPORTED_KIND, uninjectManifests } from '@outrigger/sidecar';
import { CLI_VERSION } from './cli-version.js';
import { type CommandIo, UsageError } from './command-io.js';
import { embedded } from './embedded.js';
import { joinManifestOutputs, readManifestSources } from './manifest-input.js';

export const injectUsage = `usage: outrigger inject|uninject [-f FILE|DIR|-]... [--profiles FILE] [-n NAMESPACE]
inject: the webhook's own code path on manifests: every Pod, ReplicationController, Deployment,
StatefulSet, DaemonSet, ReplicaSet, Job and CronJob (also inside a List) whose pod template opts
in gets its agent. uninject removes what inject (or the webhook) added. Unchanged documents keep
their exact text; edited ones keep their comments. Reads stdin without -f; a directory means every
.yaml/.yml/.json file below it. --profiles takes AgentProfile YAML (e.g. kubectl get agentprofiles
-o yaml); without it, the reference profile deploy/base/profiles/xxl-job.yaml.`;

/** `outrigger inject` and `outrigger uninject`: YAML to stdout, what was skipped and why to stderr. */
export async function injectCommand(direction: 'inject' | 'uninject', args: readonly string[], io: CommandIo): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      filename: { type: 'string', short: 'f', multiple: true },
      profiles: { type: 'string' },
      namespace: { type: 'string', short: 'n' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return io.out(`${injectUsage}\n`), 0;
  // The standalone file carries the reference profile; in the repository it is read from deploy/.
  const profiles = values.profiles || !embedded ? await loadProfilesFile(values.profiles || REFERENCE_PROFILE_FILE) : parseProfiles(embedded.referenceProfile);
  if (!profiles.ok) throw new UsageError(`--profiles ${values.profiles ?? REFERENCE_PROFILE_FILE}: ${profiles.error}`);
  const outputs: string[] = [];
  for (const source of readManifestSources(values.filename ?? [], io.readStdin)) {
    const result =
      direction === 'inject'
        ? injectManifests(source.text, { profiles: profiles.value, injectorVersion: CLI_VERSION, ...(values.namespace ? { defaultNamespace: values.namespace } : {}) })
        : uninjectManifests(source.text, { profiles: profiles.value });
    if (!result.ok) throw new UsageError(`${source.name}: ${result.error}`);
    reportOutcomes(source.name, direction, result.value, io);
    outputs.push(asInputFormat(source.text, result.value.yaml));
  }
  io.out(joinManifestOutputs(outputs));
  return 0;
}

function reportOutcomes(file: string, direction: string, result: ManifestInjection, io: CommandIo): void {
  result.warnings.forEach((w) => io.err(`warning: ${file}: ${w}\n`));
  for (const doc of result.documents) {
    const why = skipReason(doc, direction);
    if (why) io.err(`note: ${file}: ${describeDocument(doc)}: ${why}\n`);
  }
}

/** JSON in, JSON out with the input's indentation (`kubectl get -o json` uses 4); YAML is edited in place. */
function asInputFormat(input: string, output: string): string {
  if (output === input || !/^\s*[{[]/.test(input)) return output;
  const indent = /\n( +)\S/.exec(input)?.[1]?.length ?? 4;
  return `${JSON.stringify(YAML.parse(output), null, indent)}\n`;
}

/** Why a document was left alone, or undefined when nothing needs saying. */
export function skipReason(doc: DocumentOutcome, direction: string): string | undefined {
  if (direction === 'inject' && doc.decision === `skipped:${UNSUPPORTED_KIND}`) {
    return `not injected (${UNSUPPORTED_KIND}): it has a pod template, but only Pods, ReplicationControllers and the apps/v1 and batch/v1 workloads are edited; the webhook still injects the pods it creates when they opt in`;
  }
  if (direction === 'inject' && doc.decision.startsWith('skipped:')) return `not ${direction}ed (${doc.decision.slice('skipped:'.length)})`;
  return undefined;
}
