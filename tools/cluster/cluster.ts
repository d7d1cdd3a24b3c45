import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { clusterDir, clusterLeftovers, installOutrigger, NODE_BINARIES, resolveBinaries, startCluster, tearDownCluster } from '@outrigger/control-plane';
import { hangupLog, stopOnSignals } from './cluster-session.ts';

// `npm run cluster`: a local single-node cluster with Outrigger installed from deploy/overlays/local,
// in the foreground; Ctrl-C removes everything it created.
const { values } = parseArgs({
  options: {
    kubeconfig: { type: 'string', default: '.outrigger/kubeconfig' },
    'no-install': { type: 'boolean', default: false },
    teardown: { type: 'boolean', default: false },
  },
});
const log = (line: string) => console.log(`  ${line}`);

if (values.teardown) {
  const dir = clusterDir();
  await tearDownCluster(dir, await resolveBinaries(log, NODE_BINARIES));
  const left = clusterLeftovers(dir);
  console.log(left.length === 0 ? 'nothing of a local cluster is left on this host' : `still left: ${left.join('; ')}`);
  process.exit(left.length === 0 ? 0 : 1);
}

const kubeconfig = resolve(values.kubeconfig ?? '.outrigger/kubeconfig');
const cluster = await startCluster({ log }).catch((error: Error) => {
  console.error(`\n${error.message}`);
  process.exit(1);
});
const stop = stopOnSignals(cluster, hangupLog(kubeconfig));

try {
  if (!values['no-install']) await installOutrigger(cluster, log);
  mkdirSync(dirname(kubeconfig), { recursive: true });
  copyFileSync(cluster.kubeconfigPath, kubeconfig);
  console.log(`
Kubernetes ${cluster.version}: one node, ready${values['no-install'] ? '' : ', with Outrigger installed from deploy/overlays/local'}.

  export KUBECONFIG=${kubeconfig}
  alias kubectl=${cluster.binDir}/kubectl
  kubectl get pods -A

Images loaded on the node (imagePullPolicy IfNotPresent or Never): ${cluster.images.map((i) => i.ref).join(', ')}.
Logs of every component: ${cluster.dir}/*.log. Press Ctrl-C to stop and remove everything.`);
} catch (error) {
  console.error(`\n${(error as Error).message}\nlogs: ${cluster.dir}/*.log`);
  await stop(1);
}
