import { parseArgs } from 'node:util';
import { INSTALL_NAMES, INSTANCE_LABEL } from '@outrigger/install';
import { type CommandIo, UsageError } from './command-io.js';
import { cliKubeClient } from './kube-client.js';
import { readManifestSources } from './manifest-input.js';
import { manifestObjects, restoreObjects } from './restore/restore-objects.js';

export const restoreUsage = `usage: outrigger restore [--replace] -f FILE|DIR|-... [--namespace NS] [--kubeconfig FILE]
Creates the objects of these manifests that do not exist in the cluster and never changes one that
does: what \`outrigger check\` finds missing comes back as the files have it, and the rest of the
install (your overlay's images, replicas, patches) stays as it is. With --replace, puts the objects
that exist back as the files have them too; only admission policies and their bindings, which no
overlay changes (other manifests are refused). Each object carries the install's ${INSTANCE_LABEL} label, as its
Deployments do; manifests labelled as another
installation's are refused, and so is a Helm install (the helm command that repairs it is named).
Namespaced objects go into --namespace (default ${INSTALL_NAMES.namespace}), except those the
manifests put in another one (e.g. default). E.g. from your own overlay:
kubectl kustomize deploy/overlays/<yours> | outrigger restore -f -`;

export async function restoreCommand(args: readonly string[], io: CommandIo): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      filename: { type: 'string', short: 'f', multiple: true },
      namespace: { type: 'string', short: 'n', default: INSTALL_NAMES.namespace },
      replace: { type: 'boolean' },
      kubeconfig: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return io.out(`${restoreUsage}\n`), 0;
  if (!values.filename?.length) throw new UsageError('name the manifests to restore from with -f (a file, a directory, or - for stdin)');
  const objects = readManifestSources(values.filename, io.readStdin).flatMap((source) => manifestObjects(source.text, source.name));
  const outcomes = await restoreObjects(cliKubeClient(values.kubeconfig), objects, values.namespace, { replace: values.replace ?? false });
  for (const { object, result } of outcomes) io.out(result === 'exists' ? `exists, left as it is: ${object}\n` : `${result} ${object}\n`);
  return 0;
}
